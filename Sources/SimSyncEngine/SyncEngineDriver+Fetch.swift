import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Fetching, in the order of `CKSyncEngine`'s class overview: `willFetchChanges`;
/// `fetchedDatabaseChanges` when zones were deleted; for each zone with changes
/// `willFetchRecordZoneChanges`, then `fetchedRecordZoneChanges` per page (records of several
/// zones may share a page, as Apple's event has no zone), then `didFetchRecordZoneChanges`;
/// `didFetchChanges`.
extension SyncEngineDriver {
  func startFetch(_ context: SyncEngine.FetchChangesContext, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    _ = launched()
    fetchFirst = false
    operation = .fetching(context, zones: [])
    deliver(.willFetchChanges(.init(context: context)))
    requestFetch(view, effects: &effects)
  }

  /// The next request of the fetch under way, with the options the delegate gives for it.
  func requestFetch(_ view: DeviceState, effects: inout [DeviceEffect]) {
    guard failure == nil, case .fetching(let context, _) = operation else { return }
    let engine = self.engine(operationScope)
    appEntries &+= 1
    do { _ = try engine.nextFetchOptions(context) } catch {
      fail(error.description)
      return
    }
    guard link.online, view.account != nil else { return finishFetch(error: .networkUnavailable, effects: &effects) }
    let id = nextRequest
    nextRequest += 1
    inFlight = .fetch(id)
    if operationScope == .shared {
      effects.append(.send(.fetchShared(requestID: id, token: engine.state.changeToken)))
    } else {
      effects.append(.send(.fetch(requestID: id, token: engine.state.changeToken, zone: view.zoneEpoch)))
    }
    awaitAnswer(view, effects: &effects)
  }

  /// The fetch ends: `didFetchRecordZoneChanges` for each zone it announced, `didFetchChanges`;
  /// with changes pending, the engine sends next.
  func finishFetch(error: SyncError.Code?, effects: inout [DeviceEffect]) {
    guard case .fetching(let context, let zones) = operation else { return }
    operation = .idle
    if let error { return failFetch(context, announced: zones, error: error) }
    for zone in zones { deliver(.didFetchRecordZoneChanges(.init(zoneID: zone, error: nil))) }
    deliver(.didFetchChanges(.init(context: context)))
    if error == nil, automatic, app != nil {
      let state = engine(operationScope).state
      let declinedBefore = declined[operationScope == .shared ? 1 : 0].map { $0 == state.pendingRecordZoneChanges } ?? false
      if !state.pendingRecordZoneChanges.isEmpty && !declinedBefore || !state.pendingDatabaseChanges.isEmpty {
        enqueue(.send(.init()), .scheduled, scope: operationScope)
      }
    }
  }

  /// A fetch that failed tells the delegate so: `didFetchRecordZoneChanges` with the error for
  /// each of the app's zones (announced first with `willFetchRecordZoneChanges` if the failure
  /// came before any of their records: the simulated server answers all zones at once, where
  /// CloudKit fetches zone by zone), then `didFetchChanges` — the only way an app can tell a
  /// fetch that failed from one that found nothing.
  func failFetch(_ context: SyncEngine.FetchChangesContext, announced: [SyncRecordZoneID], error: SyncError.Code) {
    var zones = announced
    // (The shared database's zones are those it announced, if any.)
    let known = operationScope == .shared ? [] : databaseZones
    for zone in known where !zones.contains(zone) {
      deliver(.willFetchRecordZoneChanges(.init(zoneID: zone)))
      zones.append(zone)
    }
    for zone in zones { deliver(.didFetchRecordZoneChanges(.init(zoneID: zone, error: SyncError(error)))) }
    deliver(.didFetchChanges(.init(context: context)))
  }

  /// The deletes a zone deletion made: the records the app drops for it are deleted by them, and
  /// the app's delete rules for it name them.
  func noteZoneDeletes(_ env: DeviceEnvironment) {
    for (key, delete) in env.context.zoneDeletes {
      knownDeletes[key] = delete
      stepDeleted.insert(key)
    }
  }

  /// The zone a fetched record is in: the one it was saved in.
  func zone(of key: RecordKey) -> SyncRecordZoneID { recordID(key).zoneID }

  func fetched(_ reply: FetchReply, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let engine = self.engine(operationScope)
    switch reply {
    case .changes(let records, let token, let more):
      var modifications: [SyncEngine.Event.FetchedRecordZoneChanges.Modification] = []
      var deletions: [SyncEngine.Event.FetchedRecordZoneChanges.Deletion] = []
      for r in records {
        took(r, effects: &effects)
        let zone = zone(of: r.key)
        if case .fetching(let context, var zones) = operation, !zones.contains(zone) {
          zones.append(zone)
          operation = .fetching(context, zones: zones)
          deliver(.willFetchRecordZoneChanges(.init(zoneID: zone)))
        }
        if r.isDeleted {
          deletions.append(.init(recordID: recordID(r.key), recordType: r.typeName(in: schema)))
        } else {
          modifications.append(.init(record: syncRecord(r)))
        }
      }
      if !records.isEmpty { deliver(.fetchedRecordZoneChanges(.init(modifications: modifications, deletions: deletions))) }
      if engine.state.changeToken != token {
        engine.state.changeToken = token
        link.stateChanged = true
      }
      if more { requestFetch(view, effects: &effects) } else { finishFetch(error: nil, effects: &effects) }
    case .tokenExpired:
      engine.state.changeToken = nil
      link.stateChanged = true
      requestFetch(view, effects: &effects)
    case .failed(let error, let after):
      finishFetch(error: syncCode(error), effects: &effects)
      if automatic { retry(after: max(.seconds(5), after ?? .zero), env: env, effects: &effects) }
    case .zoneDeleted(let reason, let epoch):
      // The zones went since this device last fetched: the engine tells the app — every zone
      // of the app's it knows, with why — and starts over from no change token.
      let before = shownKeys()
      engine.state.changeToken = nil
      link.stateChanged = true
      view.driverSetZoneEpoch(epoch)
      serverCopies = [:]
      // What the zone deletion deleted: the app's delete rules for it name those deletes.
      noteZoneDeletes(env)
      let why: SyncEngine.Event.FetchedDatabaseChanges.Deletion.Reason =
        switch reason {
        case .deleted: .deleted
        case .purged: .purged
        case .encryptedDataReset: .encryptedDataReset
        }
      deliver(.fetchedDatabaseChanges(.init(deletions: databaseZones.map { .init(zoneID: $0, reason: why) })))
      zoneGone(reason, shownBefore: before, effects: &effects)
      requestFetch(view, effects: &effects)
    case .shared:
      // (Answered by `fetchedShared`.)
      break
    }
  }
}
