import Logging
import PresencePostgres

/// One versioned SQL file of `schemas/sql`, embedded in the binary.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    /// A stable fingerprint of the SQL, recorded when applied, so an edited migration is noticed.
    public var checksum: String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in sql.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return String(hash, radix: 16)
    }

    /// Every migration, in the order they apply. A new file in `schemas/sql` is added here.
    public static let all: [Migration] = [
        Migration(version: 1, name: "registry", sql: String(decoding: PackageResources.v001_registry_sql, as: UTF8.self)),
        Migration(version: 2, name: "sessions", sql: String(decoding: PackageResources.v002_sessions_sql, as: UTF8.self)),
        Migration(version: 3, name: "views", sql: String(decoding: PackageResources.v003_views_sql, as: UTF8.self)),
        Migration(version: 4, name: "aggregator_clock", sql: String(decoding: PackageResources.v004_aggregator_clock_sql, as: UTF8.self)),
        Migration(version: 5, name: "notifications", sql: String(decoding: PackageResources.v005_notifications_sql, as: UTF8.self)),
        Migration(version: 6, name: "visits_by_arrival", sql: String(decoding: PackageResources.v006_visits_by_arrival_sql, as: UTF8.self)),
        Migration(version: 7, name: "aggregator_journal", sql: String(decoding: PackageResources.v007_aggregator_journal_sql, as: UTF8.self)),
        Migration(version: 8, name: "beacon_policies", sql: String(decoding: PackageResources.v008_beacon_policies_sql, as: UTF8.self)),
        Migration(version: 9, name: "node_calibration", sql: String(decoding: PackageResources.v009_node_calibration_sql, as: UTF8.self)),
        Migration(version: 10, name: "roles", sql: String(decoding: PackageResources.v010_roles_sql, as: UTF8.self)),
        Migration(version: 11, name: "erasures", sql: String(decoding: PackageResources.v011_erasures_sql, as: UTF8.self)),
        Migration(version: 12, name: "reports", sql: String(decoding: PackageResources.v012_reports_sql, as: UTF8.self)),
        Migration(version: 13, name: "database_identity", sql: String(decoding: PackageResources.v013_database_identity_sql, as: UTF8.self)),
        Migration(version: 14, name: "settings", sql: String(decoding: PackageResources.v014_settings_sql, as: UTF8.self)),
        Migration(version: 15, name: "monthly_partitions", sql: String(decoding: PackageResources.v015_monthly_partitions_sql, as: UTF8.self)),
        Migration(version: 16, name: "shard_owners", sql: String(decoding: PackageResources.v016_shard_owners_sql, as: UTF8.self)),
        Migration(version: 17, name: "foreign_identities", sql: String(decoding: PackageResources.v017_foreign_identities_sql, as: UTF8.self)),
        Migration(version: 18, name: "zones", sql: String(decoding: PackageResources.v018_zones_sql, as: UTF8.self)),
        Migration(version: 19, name: "visit_min_dwell", sql: String(decoding: PackageResources.v019_visit_min_dwell_sql, as: UTF8.self)),
    ]
}

/// Why the schema could not be brought up to date.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

extension PostgresConnection {
    /// Applies every migration not yet recorded in `presence.migrations`, each in its own
    /// transaction, under an advisory lock so that concurrent runs wait for each other. Returns the
    /// versions applied now (none when the schema is current).
    public func migrate(_ migrations: [Migration] = Migration.all, logger: Logger) throws -> [Int] {
        try execute(script: """
            CREATE SCHEMA IF NOT EXISTS presence;
            CREATE TABLE IF NOT EXISTS presence.migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        _ = try query("SELECT pg_advisory_lock(7264001)")
        defer { _ = try? query("SELECT pg_advisory_unlock(7264001)") }
        let rows = try query("SELECT version, checksum FROM presence.migrations").rows
        var applied: [Int: String] = [:]
        for row in rows {
            if let version = try row.int(0), let checksum = row.string(1) { applied[version] = checksum }
        }
        var done: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            if let checksum = applied[migration.version] {
                guard checksum == migration.checksum else {
                    throw MigrationError(message: "migration \(migration.version) (\(migration.name)) was changed after it was applied: migrations must not be edited, add a new one")
                }
                continue
            }
            try transaction { db in
                try db.execute(script: migration.sql)
                _ = try db.query("INSERT INTO presence.migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                 [migration.version, migration.name, migration.checksum])
            }
            logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            done.append(migration.version)
        }
        return done
    }
}
