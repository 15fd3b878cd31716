enum PresenceScannerPlaceholder {}
