@_spi(Kernel) import Simulator

/// A device driven by the user's own app and sync engine (the `SimSyncEngine` product) instead
/// of the built-in engine. The world keeps the device's ``DeviceState`` as what the oracle and
/// settle read of it — what the app shows, what it has not sent, where it fetched to, whether a
/// request is out — and the driver keeps that view up to date (``DeviceState/driverUpdate``).
package protocol AppDriver: AnyObject {
  /// Reacts to an input (a message, a timer, connectivity, a kill), as the built-in engine's
  /// `handle` does.
  func handle(_ input: DeviceInput, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect])
  /// Makes a user intent in the app; returns the intent as made (``Intent/ignored`` set when the
  /// app could not make it). Its causal context and ordinal are the world's to fill in.
  func perform(_ intent: UserIntent, id: IntentID, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) -> Intent
  /// Why the app's code could not be run, if it could not (the device stopped there): the
  /// report fails with it.
  var failure: String? { get }
  /// Faults the device ignored because they are not simulated for an app yet (`phone at 12.000s:
  /// a background budget (…)`): the report lists them.
  var notSimulated: [String] { get }
}

/// An app driver held by the world (a class of the user's, so the world's `Sendable` is the
/// caller's promise: a world with drivers is run on one thread).
package final class DriverBox: @unchecked Sendable {
  package let driver: any AppDriver
  package init(_ driver: any AppDriver) { self.driver = driver }
}

extension DeviceState {
  /// For an app driver: what the device shows now (records with their provenance; a change in
  /// visibility is reported in `effects`), the records with changes not yet sent, the change
  /// token fetched to, and whether a request is out.
  package mutating func driverUpdate(shown: [RecordState], pending: [RecordKey], token: Int64?, busy: Bool, effects: inout [DeviceEffect]) {
    var next = RecordTable()
    for r in shown { next[r.key] = r }
    for key in store.keys where next[key] == nil { setLocal(nil, for: key, effects: &effects) }
    for r in shown where store[r.key] != r { setLocal(r, for: r.key, effects: &effects) }
    outbox = Outbox()
    for key in pending { outbox.save(key, fields: .all) }
    savedToken = token
    phase = busy ? .fetching(requestID: 0, refetch: false) : .idle
  }

  /// For an app driver: cuts off whatever is in flight (a kill): requests of the old session
  /// never reach the server.
  package mutating func driverNewSession() { session &+= 1 }

  /// For an app driver: whether the device is online (its connectivity input says).
  package mutating func driverSetOnline(_ online: Bool) { self.online = online }
}
