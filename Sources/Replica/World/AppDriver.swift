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
  /// What the app made of the intents it was given on this device.
  var tally: AppIntentTally { get }
  /// The zones (by the run's numbers) the app's database has when the run starts: those it
  /// declares, as on an account that has used the app before. Others it must save first.
  var initialZones: [Int32] { get }
  /// Whether the app carries out the schema's delete rules itself (an app that states its
  /// schema: its driver reports each as a ``DeviceEffect/ruleIntent(_:)``); otherwise the world
  /// makes each rule's intents on the device, as a store's rules would.
  var runsItsOwnDeleteRules: Bool { get }
  /// With sharing: the server answered this device's fetch `requestID` of its account's shared
  /// database (the answer is on its way, and may be lost): each record's owner, and the shares
  /// as they are now — what the app's shared-database engine hands over as `CKShare` records
  /// when the answer arrives.
  func sharedFetchAnswered(requestID: UInt64, owners: [(key: RecordKey, owner: Int32)], shares: [Share])
  /// The world changed the device's asset files itself (`purge-staging`, `delete-file`): the
  /// app's own view of its files follows (``DeviceState/files`` is already changed). Nothing by
  /// default.
  func filesChangedByTheWorld(stagingPurged: Bool, deleted name: String?)
  /// A reply now on its way downloads `transfer` worth of asset bytes over the device's link:
  /// the request it answers times out only after them.
  func downloading(for transfer: SimDuration, view: DeviceState, effects: inout [DeviceEffect])
}

extension AppDriver {
  /// Nothing: a driver whose requests do not time out.
  package func downloading(for transfer: SimDuration, view: DeviceState, effects: inout [DeviceEffect]) {}

  /// Nothing: a driver of an app that does not share.
  package func sharedFetchAnswered(requestID: UInt64, owners: [(key: RecordKey, owner: Int32)], shares: [Share]) {}
}

extension SyncWorld {
  /// Tells device `d`'s app driver, if it has one, of the server's answer to its shared-database
  /// fetch `id` (from `token`, for `account`): the owner of each record the answer names, and
  /// the shares (read when the server answers, as the `CKShare` records it sends would be).
  mutating func tellDriverOfSharedFetch(_ id: UInt64, device d: Int32, account: Int32, token: Int64?) {
    guard !drivers.isEmpty, let box = drivers[Int(d)] else { return }
    guard case .shared(let records, let revoked, _, let gone, _, _) = sharedFetch(account: account, token: token) else { return }
    var owners: [(key: RecordKey, owner: Int32)] = []
    for key in records.map(\.key) + revoked + gone { owners.append((key, Int32(self.account(ofRecord: key)))) }
    box.driver.sharedFetchAnswered(requestID: id, owners: owners, shares: sharing.shares)
  }
}

/// How many intents an app applied and refused on a device: a refusal on a record the device
/// does not show is the scenario's doing (expected); any other refusal is the app failing to
/// make a change of its own schema, which fails the run — a test whose intents the app refuses
/// tests nothing.
package struct AppIntentTally: Hashable, Sendable {
  /// Intents the app made.
  package var applied = 0
  /// Intents refused on a record the device did not show (expected).
  package var refusedAsExpected = 0
  /// Intents the app refused although it showed the record (or a create), each in words.
  package var refused: [String] = []
  /// Intents the simulator does not give an app yet (text replacements), skipped.
  package var notSimulated = 0
  package init() {}

  /// The sum of two tallies.
  package static func + (a: AppIntentTally, b: AppIntentTally) -> AppIntentTally {
    var t = a
    t.applied += b.applied
    t.refusedAsExpected += b.refusedAsExpected
    t.refused += b.refused
    t.notSimulated += b.notSimulated
    return t
  }
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
    // Which keys are shown (no copy of the records made to tell), then what is no longer
    // shown goes, in key order, and what changed is set, in the order shown.
    let capacity = store.capacity
    // (The slots walked in place, beside the shown records in key order — as drivers give them;
    // sorted here otherwise — with nothing allocated: taking a record out empties only its own
    // slot, so each is read as it was before the walk.)
    let inOrder = zip(shown, shown.dropFirst()).allSatisfy { $0.key <= $1.key } ? shown : shown.sorted { $0.key < $1.key }
    var next = 0
    for k in 0..<capacity {
      let key = RecordKey(k)
      while next < inOrder.count, inOrder[next].key < key { next += 1 }
      if next < inOrder.count, inOrder[next].key == key { continue }
      if store.contains(key) { setLocal(nil, for: key, effects: &effects) }
    }
    for r in shown where !store.holds(r) { setLocal(r, for: r.key, effects: &effects) }
    outbox = Outbox()
    for key in pending { outbox.save(key, fields: .all) }
    savedToken = token
    phase = busy ? .fetching(requestID: 0, refetch: false) : .idle
  }

  /// For an app driver: the CloudKit error its engine's last send failed with (nil: the last
  /// went through), for the report of a sync that stalled on it.
  package mutating func driverSetWaiting(_ error: CloudKitError?, at now: VirtualTime) {
    guard let error else {
      waitingOn = nil
      return
    }
    if var w = waitingOn {
      w.error = error
      w.attempts += 1
      waitingOn = w
    } else {
      waitingOn = Wait(error: error, retryAfter: nil, since: now, attempts: 1)
    }
  }

  /// For an app driver: cuts off whatever is in flight (a kill): requests of the old session
  /// never reach the server.
  package mutating func driverNewSession() { session &+= 1 }

  /// For an app driver: whether the device is online (its connectivity input says).
  package mutating func driverSetOnline(_ online: Bool) { self.online = online }

  /// For an app driver: the account the device is signed into now (nil: signed out). Its
  /// requests go to that account's database.
  package mutating func driverSetAccount(_ account: Int32?) { self.account = account }

  /// For an app driver: the zone the device's requests name (the server's count of the zone's
  /// deletions, as the device last learned it).
  package mutating func driverSetZoneEpoch(_ epoch: Int32) { zoneEpoch = epoch }

  /// For an app driver of an app that shares: where its shared-database engine fetched to (nil:
  /// from the start), and records that came from the shared database or were made in a share
  /// (another account's, in their owner's zone).
  package mutating func driverSetShared(token: Int64?, sharedKeys keys: [RecordKey]) {
    sharedToken = token
    for key in keys { sharedKeys.insert(key) }
  }

  /// For an app driver: the changes the app set aside with `account` when it signed out of it,
  /// unsent until that account signs in again (settle reports them if it never does); an empty
  /// list clears them.
  package mutating func driverSetAside(_ keys: [RecordKey], account: Int32) {
    _ = stashes.takeBack(account: account)
    guard !keys.isEmpty else { return }
    var unsent = Outbox()
    for key in keys { unsent.save(key, fields: .all) }
    stashes.setAside(Stash(store: RecordTable(), ancestors: RecordTable(), outbox: unsent, savedToken: nil, zoneEpoch: 0), account: account)
  }
}
