/// Decides the hello and goodbye messages of beacons that have them: hello on an enter, goodbye
/// on an exit by moving away or timing out, each at most once per cool-down for a user and a
/// beacon, so that someone pacing at the edge of a booth is greeted once. Messages may name the
/// user with `{name}` (their name, else their key), `{user}` (the key) and the place with `{beacon}`.
public struct NotificationPolicy: Sendable {
    /// How long after one message to a user at a beacon the same kind is not sent again, ms.
    public let cooldown: Int64
    private var lastSent: [Key: Int64] = [:]

    private struct Key: Hashable, Sendable {
        var user: String
        var beacon: String
        var kind: PresenceNotification.Kind
    }

    /// Forgets every message sent to `user`.
    public mutating func forget(user: String) {
        lastSent = lastSent.filter { $0.key.user != user }
    }

    /// A policy that remembers `sent` (for example, loaded after a restart).
    public init(cooldown: Int64 = 3_600_000, sent: [PresenceNotification] = []) {
        self.cooldown = cooldown
        for notification in sent {
            lastSent[Key(user: notification.user, beacon: notification.beacon, kind: notification.kind)] = notification.at
        }
    }

    /// The notifications `events` call for, in order.
    public mutating func notifications(for events: [PresenceEvent], registry: Registry) -> [PresenceNotification] {
        var notifications: [PresenceNotification] = []
        for event in events {
            guard let beacon = registry.beacons[event.beacon] else { continue }
            let kind: PresenceNotification.Kind
            let template: String?
            switch event.kind {
            case .enter:
                kind = .hello
                template = beacon.hello
            case .exit:
                guard event.reason == .moved || event.reason == .timeout else { continue }
                kind = .goodbye
                template = beacon.goodbye
            }
            guard let template, !template.isEmpty else { continue }
            let key = Key(user: event.user, beacon: event.beacon, kind: kind)
            if let last = lastSent[key], event.at - last < cooldown { continue }
            lastSent[key] = event.at
            let name = registry.users[event.user]?.name ?? event.user
            let message = template
                .replacing("{name}", with: name)
                .replacing("{user}", with: event.user)
                .replacing("{beacon}", with: beacon.name ?? beacon.key)
            notifications.append(PresenceNotification(user: event.user, beacon: event.beacon, kind: kind, message: message, at: event.at))
        }
        return notifications
    }
}
