import BreezeStore

/// Observations of a database that is never written to: for tools that watch a replica another process owns
/// (`breeze inspect`), or a copy from a bug report that must stay as it is. It opens no `Replica` (which
/// would make a device key and a new epoch); its one connection, on the observation thread, is read-only.
///
/// Values are recomputed after every commit that added events, by any process, as for
/// `Replica.observe(_:)` (inotify on the write-ahead log). The snapshot's `screen` needs a caught-up
/// projection, which a read-only connection cannot write: observe counts, vectors and states here.
///
/// ```swift
/// let observer = ReadOnlyObserver(path: "server.db")
/// let token = observer.observe { try $0.eventCount() }.start(onChange: { n in print("\(n) events") })
/// ```
public final class ReadOnlyObserver: Sendable {
    private let center: ObservationCenter

    /// An observer of the database at `path` (opened when the first observation starts; a missing or
    /// foreign file ends that observation with the error).
    public init(path: String) {
        var o = EventLog.Options()
        o.durability = .normal
        center = ObservationCenter(path: path, logOptions: o, readOnly: true)
    }

    deinit { center.stop() }

    /// Observes a value computed from the database: at once, then after every commit that changes it.
    public func observe<Value: Equatable & Sendable>(
        _ fetch: @escaping @Sendable (ReplicaSnapshot) throws -> Value
    ) -> ValueObservation<Value> {
        let center = self.center
        return ValueObservation { sink in
            let id = center.add(ValueSubscriber(fetch: fetch, sink: sink))
            return { center.remove(id) }
        }
    }

    /// Ends every observation and closes the connection. Idempotent.
    public func close() { center.stop() }
}
