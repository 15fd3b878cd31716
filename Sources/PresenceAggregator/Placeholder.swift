enum PresenceAggregatorPlaceholder {}
