enum PresenceMQTTPlaceholder {}
