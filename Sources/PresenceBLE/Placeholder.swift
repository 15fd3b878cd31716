enum PresenceBLEPlaceholder {}
