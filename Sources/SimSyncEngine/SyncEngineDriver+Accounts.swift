import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Zones deleted by the user, and iCloud account changes.
extension SyncEngineDriver {
  /// The records the app shows now (none before it is launched).
  func shownKeys() -> [RecordKey] {
    guard let app else { return [] }
    return (inApp { [app = Unchecked(app)] in await app.value.shownRecords() } ?? []).compactMap { keys[$0.recordID.recordName] }
  }

  /// The keys of the records with a pending save.
  func pendingSaves() -> Set<RecordKey> {
    var saves: Set<RecordKey> = []
    for case .saveRecord(let id) in launched().syncEngine.state.pendingRecordZoneChanges
      + (sharesHere ? engine(.shared).state.pendingRecordZoneChanges : [])
    {
      if let key = keys[id.recordName] { saves.insert(key) }
    }
    return saves
  }

  /// What the app made of a zone's deletion, for the report's explanations: the rows it
  /// dropped, and those it kept and sends again.
  func zoneGone(_ reason: ZoneDeletionReason, shownBefore before: [RecordKey], effects: inout [DeviceEffect]) {
    let after = Set(shownKeys())
    let saves = pendingSaves()
    let wiped = before.filter { !after.contains($0) }
    let reuploaded = before.filter { after.contains($0) && saves.contains($0) }
    effects.append(.fact(.zoneGone(reason, wiped: wiped, reuploaded: reuploaded)))
  }

  /// Whatever was under way stops: a request in flight is cut off (the delegate hears that it
  /// failed with `error`), timers are void.
  func cutOff(_ view: inout DeviceState, error: SyncError.Code, effects: inout [DeviceEffect]) {
    interrupt(error: error, effects: &effects)
    queue = []
    sendGeneration &+= 1
    retryGeneration &+= 1
    timeoutGeneration &+= 1
    holdUntil = .zero
    failedPushes = 0
    fetchFirst = false
    batchLimit = 400
    view.driverNewSession()
  }

  /// The user deleted the app's data on this device (`delete-zone`): the server's zones are
  /// gone already (the world deletes them at the intent); the app deletes its rows and pending
  /// changes — and may ask its engine to delete the zones, which then deletes nothing more —
  /// and the engine starts over from no change token.
  func deletedZone(epoch: Int32, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let app = launched()
    let before = shownKeys()
    cutOff(&view, error: .operationCancelled, effects: &effects)
    deletedByTheUser = databaseZones
    noteZoneDeletes(env)
    let zone = appSchema.zone(forType: "")
    _ = inApp { [app = Unchecked(app)] in await app.value.perform(.deleteZone(zoneID: zone)) }
    let engine = launched().syncEngine
    engine.state.changeToken = nil
    link.stateChanged = true
    view.driverSetZoneEpoch(epoch)
    serverCopies = [:]
    zoneGone(.deleted, shownBefore: before, effects: &effects)
  }

  /// The device signed out of its iCloud account, into one, or switched: requests stop; the
  /// engine clears its state (pending changes and change token), as `CKSyncEngine` does ("When
  /// the logged-in account changes, the sync engine will reset its internal state under the
  /// hood"); the app hears of it (`accountChange`) and decides what becomes of its rows; the
  /// engine syncs with the new account's database.
  func changeAccount(to new: Int32?, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let old = view.account
    guard old != new else { return }
    // What the running app had pending; an app that was killed is launched below, and what its
    // engine's state on disk had pending is what it had.
    let pendingRunning = app.map(pendingKeys)
    cutOff(&view, error: .operationCancelled, effects: &effects)
    if let old { zoneEpochs[old] = view.zoneEpoch }
    view.driverSetAccount(new)
    view.driverSetZoneEpoch(new.flatMap { zoneEpochs[$0] } ?? 0)
    link.signedIn = new != nil
    func user(_ account: Int32) -> String { Int(account) < accountNames.count ? accountNames[Int(account)] : "account \(account)" }
    let change: SyncEngine.Event.AccountChange.ChangeType =
      switch (old, new) {
      case (let old?, let new?): .switchAccounts(previousUser: user(old), currentUser: user(new))
      case (let old?, nil): .signOut(previousUser: user(old))
      default: .signIn(currentUser: user(new ?? 0))
      }
    let pendingBefore = pendingRunning ?? pendingKeys(launched())
    launched().syncEngine.state.reset()
    if sharesHere { launched().sharedSyncEngine?.state.reset() }
    deliver(.accountChange(.init(changeType: change)), to: .private)
    // Each engine hears of it, as each `CKSyncEngine` does.
    if sharesHere { deliver(.accountChange(.init(changeType: change)), to: .shared) }
    currentAccount = new
    sharedAnswers = [:]
    let pendingAfter = Set(pendingKeys(launched()))
    if let old {
      let aside = pendingBefore.filter { !pendingAfter.contains($0) }
      setAside[old] = aside
      view.driverSetAside(aside, account: old)
    }
    if old == nil {
      // Signed in from signed out: what was made meanwhile and is no longer pending went with
      // the engine's reset, and the app did not add it again.
      let lost = pendingBefore.filter { !pendingAfter.contains($0) }
      if !lost.isEmpty { effects.append(.fact(.wipedOnAccountChange(lost))) }
    }
    if let new, let aside = setAside.removeValue(forKey: new) {
      // Back in an account: what was set aside with it should be pending again.
      view.driverSetAside([], account: new)
      let wiped = aside.filter { !pendingAfter.contains($0) }
      if !wiped.isEmpty { effects.append(.fact(.wipedOnAccountChange(wiped))) }
    }
    // Another database: what this device knew of the server is of the old one.
    serverCopies = [:]
    lastPending = pendingAfter
    accountChangedThisStep = true
    if automatic {
      enqueue(.send(.init()), .scheduled)
      enqueue(.fetch(.init()), .scheduled)
    }
  }
}
