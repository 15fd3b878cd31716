enum PresencePostgresPlaceholder {}
