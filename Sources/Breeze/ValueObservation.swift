/// A read model observed live: an `AsyncSequence` that yields the current value at once, then a new value
/// after every commit that changes it, whether the commit came from this process, a peer of an in-process
/// sync node, or another process using the same database. Equal values are not yielded twice in a row (as
/// GRDB's `ValueObservation` removes duplicates).
///
/// ```swift
/// for try await state in replica.observeState() {
///     print(state.favourites.elements)
/// }
/// ```
///
/// Each iteration (`makeAsyncIterator`) is its own subscription; it ends when the loop is left, the task is
/// cancelled, or the replica is closed (the sequence then finishes). A value the consumer has not taken yet
/// is replaced by a newer one, so a slow consumer sees the latest value, never a backlog. A screen of a sensor
/// this replica does not hold yet (a deep link or a widget tap before the first sync) yields nothing until a
/// commit brings the sensor, then its first value; a busy database is retried at the next commit. An error
/// that is not transient (parameters a screen refuses, a damaged database) ends the sequence by throwing.
///
/// For code that is not async, `start(onChange:onError:)` calls back instead, on the observation thread.
///
/// `ValueObservation` is a `Sendable` value (hand it to any task); its iterator belongs to the one task that
/// iterates it.
public struct ValueObservation<Value: Equatable & Sendable>: AsyncSequence, Sendable {
    /// What each iteration yields: the observed value.
    public typealias Element = Value
    /// What ends an iteration with an error: `for try await` loops catch a `BreezeError`, as every other call
    /// of the library throws.
    public typealias Failure = BreezeError

    /// Registers a sink; returns what cancels the registration.
    let subscribe: @Sendable (any ObservationSink<Value>) -> @Sendable () -> Void

    /// Starts a subscription whose values the iterator returns.
    public func makeAsyncIterator() -> Iterator {
        let channel = ObservationChannel<Value>()
        channel.setCancel(subscribe(channel))
        return Iterator(channel: channel)
    }

    /// Returns the observed values, one `next()` at a time.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: ObservationChannel<Value>

        /// The next value that differs from the last one returned (the first comes at once); nil once the
        /// observation has ended.
        ///
        /// - Throws: the `BreezeError` that ended the observation.
        public mutating func next() async throws(BreezeError) -> Value? { try await channel.next() }

        /// `next()`, from the caller's isolation (what `for try await` calls): the error is a `BreezeError`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(BreezeError) -> Value? {
            try await channel.next()
        }
    }

    /// Calls `onChange` with the current value at once, then with every new one, on the observation thread
    /// (keep it short: hop to your own queue or actor for real work); `onError` once if the observation ends
    /// with an error. Stops when the token is cancelled or released.
    ///
    /// ```swift
    /// let token = replica.observeState().start { state in print(state.favourites.elements) }
    /// ```
    public func start(onChange: @escaping @Sendable (Value) -> Void,
                      onError: @escaping @Sendable (BreezeError) -> Void = { _ in }) -> ObservationToken {
        let sink = CallbackSink(onChange: onChange, onError: onError)
        return ObservationToken(sink: sink, cancel: subscribe(sink))
    }
}

/// Keeps a callback observation (`ValueObservation.start`) running; cancelling or releasing it stops it.
///
/// ```swift
/// token = replica.observeState().start { state in DispatchQueue.main.async { render(state) } }
/// token?.cancel()
/// ```
///
/// `@unchecked Sendable`: `cancelled` and the cancel closure are touched only under `lock`.
public final class ObservationToken: @unchecked Sendable {
    private let lock = Lock()
    private var sink: AnyObject?
    private var cancelAction: (@Sendable () -> Void)?

    init(sink: AnyObject, cancel: @escaping @Sendable () -> Void) {
        self.sink = sink
        cancelAction = cancel
    }

    /// Stops the observation: no new callback starts (one the observation thread has already begun may finish).
    public func cancel() {
        let action: (@Sendable () -> Void)? = lock.withLock {
            defer { cancelAction = nil; sink = nil }
            return cancelAction
        }
        action?()
    }

    deinit { cancel() }
}

/// Where an observation's values go: an iterator's channel or a callback. Sources (the observation thread,
/// the sync status) hold sinks weakly, so a consumer that goes away ends its subscription.
protocol ObservationSink<Value>: AnyObject, Sendable {
    associatedtype Value: Equatable & Sendable
    /// A new value (different from the previous one sent).
    func send(_ value: Value)
    /// The observation ended with an error.
    func fail(_ error: BreezeError)
    /// The observation ended (the replica was closed).
    func finish()
    /// True once the consumer has gone: the source can drop the sink.
    var isCancelled: Bool { get }
}

/// The buffer between the observation thread and one iterating task: at most one value waits; a newer one
/// replaces it, and one equal to the value last handed out is dropped.
///
/// `@unchecked Sendable`: every field is read and written under `lock`; the continuation is resumed outside it.
final class ObservationChannel<Value: Equatable & Sendable>: ObservationSink, @unchecked Sendable {
    private let lock = Lock()
    private var pending: Value?
    private var delivered: Value?
    private var failure: BreezeError?
    private var finished = false
    private var cancelled = false
    private var waiter: UnsafeContinuation<Result<Value?, BreezeError>, Never>?
    private var cancelAction: (@Sendable () -> Void)?

    func setCancel(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            if cancelled { return true }
            cancelAction = action
            return false
        }
        if now { action() }
    }

    var isCancelled: Bool { lock.withLock { cancelled } }

    func send(_ value: Value) {
        let w: UnsafeContinuation<Result<Value?, BreezeError>, Never>? = lock.withLock {
            if cancelled || finished { return nil }
            if let w = waiter {
                waiter = nil
                delivered = value
                return w
            }
            pending = value == delivered ? nil : value
            return nil
        }
        w?.resume(returning: .success(value))
    }

    func fail(_ error: BreezeError) {
        let w: UnsafeContinuation<Result<Value?, BreezeError>, Never>? = lock.withLock {
            if cancelled || finished { return nil }
            finished = true
            if let w = waiter { waiter = nil; return w }
            failure = error
            return nil
        }
        w?.resume(returning: .failure(error))
    }

    func finish() {
        let w: UnsafeContinuation<Result<Value?, BreezeError>, Never>? = lock.withLock {
            finished = true
            defer { waiter = nil }
            return waiter
        }
        w?.resume(returning: .success(nil))
    }

    func next() async throws(BreezeError) -> Value? {
        let result: Result<Value?, BreezeError> = await withTaskCancellationHandler {
            await withUnsafeContinuation { (c: UnsafeContinuation<Result<Value?, BreezeError>, Never>) in
                let ready: Result<Value?, BreezeError>? = lock.withLock {
                    if cancelled { return .success(nil) }
                    if let p = pending {
                        pending = nil
                        delivered = p
                        return .success(p)
                    }
                    if let f = failure {
                        failure = nil
                        return .failure(f)
                    }
                    if finished { return .success(nil) }
                    waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// The consumer has gone (task cancelled, iterator released): wake a waiting `next` with nil and end
    /// the subscription.
    func cancel() {
        let (w, action): (UnsafeContinuation<Result<Value?, BreezeError>, Never>?, (@Sendable () -> Void)?) = lock.withLock {
            if cancelled { return (nil, nil) }
            cancelled = true
            defer { waiter = nil; cancelAction = nil }
            return (waiter, cancelAction)
        }
        w?.resume(returning: .success(nil))
        action?()
    }

    deinit { cancelAction?() }
}

/// A sink that calls back (`ValueObservation.start`); its token owns it.
final class CallbackSink<Value: Equatable & Sendable>: ObservationSink {
    private let onChange: @Sendable (Value) -> Void
    private let onError: @Sendable (BreezeError) -> Void

    init(onChange: @escaping @Sendable (Value) -> Void, onError: @escaping @Sendable (BreezeError) -> Void) {
        self.onChange = onChange
        self.onError = onError
    }

    var isCancelled: Bool { false }   // the token releases the sink; sources hold it weakly
    func send(_ value: Value) { onChange(value) }
    func fail(_ error: BreezeError) { onError(error) }
    func finish() {}
}
