enum PresenceStorePlaceholder {}
