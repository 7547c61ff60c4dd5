/// Live read models: each is an `ValueObservation`, an `AsyncSequence` that yields at once, then after every
/// commit that changes the value.
extension Replica {
    /// Observes any value computed from the replica, as GRDB's `ValueObservation.tracking` does: `fetch` runs
    /// on the observation thread at once and after every commit that added events (here, from a peer, or
    /// from another process), and the value is yielded when it differs from the last one.
    ///
    /// ```swift
    /// let count = replica.observe { try $0.eventCount(stream: .public) }
    /// ```
    public func observe<Value: Equatable & Sendable>(
        _ fetch: @escaping @Sendable (ReplicaSnapshot) throws -> Value
    ) -> ValueObservation<Value> {
        let center = observers
        return ValueObservation { sink in
            let id = center.add(ValueSubscriber(fetch: fetch, sink: sink))
            return { center.remove(id) }
        }
    }

    /// Observes a screen's read model.
    ///
    /// ```swift
    /// for try await sheet in replica.observe(SheetScreen.self, replica.parameters(sensor: "131075")) {
    ///     star.isOn = sheet.isFavourite
    /// }
    /// ```
    ///
    /// The parameters are fixed for the observation, `now` included (no screen reads the clock): observe again
    /// with a later `now` to move time on.
    public func observe<S: Screen>(_ screen: S.Type, _ parameters: ScreenParameters) -> ValueObservation<S.Model> {
        observe { try $0.screen(screen, parameters) }
    }

    /// Observes a user's settings (default `options.user`).
    ///
    /// ```swift
    /// for try await state in replica.observeState() { unitToggle.isOn = state.effectiveUnit == .fahrenheit }
    /// ```
    public func observeState(user: String? = nil) -> ValueObservation<UserState> {
        let u = user ?? options.user
        return observe { try $0.state(user: u) }
    }
}
