import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// The shared database, for an app that shares (``SimApp/sharesRecords``): its second engine
/// fetches the account's shared database after the private one (`fetchShared`), and hears of the
/// zones other accounts share with it as `CKSyncEngine` does — their records, in zones whose
/// `ownerName` is the owner's, with the zone's ``SyncShare``; a zone whose share ended (removed,
/// left, stopped, the owner's zone deleted) as a deletion of that zone. The two engines' sends
/// and fetches take turns (the simulator runs one request of a device at a time).
extension SyncEngineDriver {
  /// Whether the app's shared-database engine runs in this run.
  var sharesHere: Bool { sharingRun && app?.sharedSyncEngine != nil }

  /// Whether the engine of `scope` has record changes pending.
  func hasPending(_ scope: SyncDatabase.Scope) -> Bool {
    guard let app else { return false }
    let engine = scope == .shared ? app.sharedSyncEngine : app.syncEngine
    return engine.map { !$0.state.pendingRecordZoneChanges.isEmpty } ?? false
  }

  /// In a run that shares: notes it, and the account signed in; an app that does not share
  /// cannot be run there (its device would never fetch what is shared with it).
  func checkSharing(_ view: DeviceState) {
    currentAccount = view.account
    guard !sharingRun else { return }
    sharingRun = true
    if let unsupportedSharing {
      fail(
        "the scenario \(unsupportedSharing), which an app's engine is not handed yet: SyncShare is a zone-wide share of the app's own zone; run it with the built-in engine"
      )
    } else if !App.sharesRecords {
      fail(
        "the scenario shares records (share lines), and \(_typeName(App.self, qualified: false)) does not say it shares (SimApp.sharesRecords is false): an app that shares makes a second SyncEngine for the device's sharedDatabase and says so"
      )
    } else if launched().sharedSyncEngine == nil {
      fail(
        "\(_typeName(App.self, qualified: false)) says it shares (sharesRecords) but made no engine for the shared database (sharedSyncEngine is nil)"
      )
    }
  }

  /// Tells the app the shared engine's state changed (`stateUpdate`).
  func deliverSharedState() {
    link.sharedStateChanged = false
    guard let shared = launched().sharedSyncEngine else { return }
    sharedStateUpdated = shared.state.pendingRecordZoneChanges
    deliver(.stateUpdate(.init(stateSerialization: shared.state.serialization)), to: .shared)
  }

  /// The user name the app knows account `account` by.
  func userName(_ account: Int32) -> String {
    Int(account) < accountNames.count && account >= 0 ? accountNames[Int(account)] : "account \(account)"
  }

  /// A record of another account's, as this device's app names it: in its owner's zone (nil for
  /// one of the signed-in account's own, or of no known owner).
  func sharedRecordID(_ key: RecordKey) -> SyncRecordID? {
    guard let owner = ownerOf[key], owner != currentAccount else { return nil }
    var zoneName = appSchema.zoneName
    if let n = provenance.zoneOf[key], let zone = provenance.zone(n) {
      zoneName = zone.zoneName
    } else {
      let type = Int(key) < provenance.types.count ? provenance.types[Int(key)] : 0
      zoneName = defaultZone(ofType: type).zoneName
    }
    return SyncRecordID(recordName: names[Int(key)], zoneID: SyncRecordZoneID(zoneName: zoneName, ownerName: userName(owner)))
  }

  /// Whether a record is another account's on this device (from a share).
  func isShared(_ key: RecordKey) -> Bool {
    guard let owner = ownerOf[key] else { return false }
    return owner != currentAccount
  }

  /// Why an intent cannot be made, when it refers across zones: a record of a share and one of
  /// the account's own cannot refer to each other (CloudKit references stay within a zone), as
  /// the built-in engine refuses.
  func crossZoneReference(_ intent: UserIntent, key: RecordKey) -> String? {
    let values: [FieldWrite]
    switch intent {
    case .create(_, _, let v), .set(_, let v): values = v
    default: return nil
    }
    var targets: [Bool] = []
    for w in values { if case .ref(let target) = w.value { targets.append(isShared(target)) } }
    let here: Bool? = if case .set = intent { isShared(key) } else { targets.first }
    guard let here, targets.contains(where: { $0 != here }) else { return nil }
    return
      "a reference across zones: one record is in a share and the other in the account's own zone, and CloudKit references stay within a zone"
  }

  /// A create referring to a record of a share is made in that share (its owner's zone): the
  /// world's view hears of it, as the built-in engine's does.
  func madeInShare(_ intent: UserIntent, key: RecordKey, _ view: inout DeviceState) {
    guard case .create(_, _, let values) = intent else { return }
    for w in values {
      guard case .ref(let target) = w.value, isShared(target), let owner = ownerOf[target] else { continue }
      ownerOf[key] = owner
      view.driverSetShared(token: view.sharedToken, sharedKeys: [key])
      return
    }
  }

  /// The owner of the share an intent is made in (nil: the account's own zone).
  func shareOwner(_ intent: UserIntent, key: RecordKey) -> Int32? {
    if case .create(_, _, let values) = intent {
      for w in values { if case .ref(let target) = w.value, isShared(target) { return ownerOf[target] } }
      return nil
    }
    return isShared(key) ? ownerOf[key] : nil
  }

  /// Why the app may refuse an intent on a record of a share it was told is read-only for its
  /// user (``SyncShare/currentUserParticipant``): the app's sharing code does not let the user
  /// edit it. Nil when the app was not told so (a refusal then counts against it).
  func readOnlyHere(_ intent: UserIntent, key: RecordKey) -> String? {
    guard let owner = shareOwner(intent, key: key), let me = currentAccount,
      deliveredShares[shareKey(owner)]?.first(where: { $0.userName == userName(me) })?.permission == .readOnly
    else { return nil }
    return
      "the app does not let \(userName(me)) change \(userName(owner))'s records: their share is read-only for \(userName(me)) (its CKShare says so)"
  }

  /// The server answered a shared fetch: kept until the answer arrives.
  package func sharedFetchAnswered(requestID: UInt64, owners: [(key: RecordKey, owner: Int32)], shares: [Share]) {
    sharedAnswers[requestID] = (owners, shares)
  }

  /// The key of `owner`'s share, as the signed-in account was handed it, in ``deliveredShares``
  /// (the app keeps each account's shares apart, and brings them back when it signs in again).
  func shareKey(_ owner: Int32) -> Int64 { Int64(currentAccount ?? -1) << 32 | Int64(UInt32(bitPattern: owner)) }

  /// The share of `owner`'s zone as the signed-in user sees it (its participants; nil when the
  /// user takes no part in an active share of it).
  func shareParticipants(owner: Int32, in shares: [Share]) -> [SyncShare.Participant]? {
    guard let me = currentAccount else { return nil }
    for share in shares where share.owner == owner && share.active {
      guard share.permission(of: me) != nil else { continue }
      var out = [SyncShare.Participant(userName: userName(owner), role: .owner, permission: .readWrite, acceptanceStatus: .accepted)]
      for p in share.participants {
        out.append(
          .init(
            userName: userName(p.account), role: .privateUser, permission: p.permission == .readOnly ? .readOnly : .readWrite,
            acceptanceStatus: p.accepted ? .accepted : .pending))
      }
      return out
    }
    return nil
  }

  /// A page of the shared database: zones whose share ended go (`fetchedDatabaseChanges`), then
  /// the records — each zone's ``SyncShare`` first when the engine has not handed it over as it
  /// is now — in one `fetchedRecordZoneChanges`.
  func fetchedShared(
    _ records: [RecordState], revoked: [RecordKey], readOnly: [RecordKey], gone: [RecordKey], token: Int64, moreComing more: Bool,
    request: UInt64, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]
  ) {
    let engine = self.engine(.shared)
    let answer = sharedAnswers.removeValue(forKey: request)
    // (Answers to earlier requests never came: lost, or cut off.)
    if !sharedAnswers.isEmpty { sharedAnswers = sharedAnswers.filter { $0.key > request } }
    for (key, owner) in answer?.owners ?? [] { ownerOf[key] = owner }
    // Zones whose share ended: deleted from the shared database.
    var ended: [SyncRecordZoneID] = []
    var endedOwners: [Int32] = []
    for key in revoked {
      guard let id = sharedRecordID(key) else { continue }
      if !ended.contains(id.zoneID) { ended.append(id.zoneID) }
      if let owner = ownerOf[key], !endedOwners.contains(owner) { endedOwners.append(owner) }
    }
    let before = revoked.isEmpty ? [] : shownKeys()
    if !ended.isEmpty {
      deliver(.fetchedDatabaseChanges(.init(deletions: ended.map { .init(zoneID: $0, reason: .deleted) })))
      for owner in endedOwners { deliveredShares[shareKey(owner)] = nil }
    }
    // Records, each zone's share first.
    var modifications: [SyncEngine.Event.FetchedRecordZoneChanges.Modification] = []
    var deletions: [SyncEngine.Event.FetchedRecordZoneChanges.Deletion] = []
    func announce(_ zone: SyncRecordZoneID) {
      if case .fetching(let context, var zones) = operation, !zones.contains(zone) {
        zones.append(zone)
        operation = .fetching(context, zones: zones)
        deliver(.willFetchRecordZoneChanges(.init(zoneID: zone)))
      }
    }
    var owners: [Int32] = []
    for r in records { if let owner = ownerOf[r.key], owner != currentAccount, !owners.contains(owner) { owners.append(owner) } }
    for share in answer?.shares ?? [] where share.active && share.owner >= 0 && !owners.contains(share.owner) {
      if deliveredShares[shareKey(share.owner)] != nil { owners.append(share.owner) }
    }
    for owner in owners {
      guard let participants = shareParticipants(owner: owner, in: answer?.shares ?? []), deliveredShares[shareKey(owner)] != participants else {
        continue
      }
      deliveredShares[shareKey(owner)] = participants
      let zone = SyncRecordZoneID(zoneName: appSchema.zoneName, ownerName: userName(owner))
      announce(zone)
      let share = SyncShare(zoneID: zone, owner: participants[0], participants: participants, currentUser: userName(currentAccount ?? 0))
      modifications.append(.init(record: share))
    }
    for r in records {
      guard let id = sharedRecordID(r.key) else { continue }
      took(r, effects: &effects)
      newSharedKeys.append(r.key)
      announce(id.zoneID)
      if r.isDeleted {
        deletions.append(.init(recordID: id, recordType: r.typeName(in: schema)))
      } else {
        modifications.append(.init(record: syncRecord(r)))
      }
    }
    // Records gone from their owner's zone with its deletion: a copy the device had goes.
    for key in gone where serverCopies[key] != nil {
      guard let id = sharedRecordID(key) else { continue }
      serverCopies[key] = nil
      stepAccessEnded.insert(key)
      let type = Int(key) < provenance.types.count ? provenance.types[Int(key)] : 0
      deletions.append(.init(recordID: id, recordType: schema.types[Int(type)].name))
    }
    if !modifications.isEmpty || !deletions.isEmpty {
      deliver(.fetchedRecordZoneChanges(.init(modifications: modifications, deletions: deletions)))
    }
    if !revoked.isEmpty {
      // What the app did with the copies it showed: removed (no loss, nothing uploaded), or kept.
      // (What the device had: shown, or with a change pending — a delete not sent yet.)
      let after = Set(shownKeys())
      let had = Set(before).union(lastPending)
      let removed = revoked.filter { had.contains($0) && !after.contains($0) }
      let kept = revoked.filter { had.contains($0) && after.contains($0) }
      for key in revoked {
        stepAccessEnded.insert(key)
        serverCopies[key] = nil
      }
      if !removed.isEmpty || !kept.isEmpty { effects.append(.fact(.accessEnded(removed: removed, kept: kept))) }
    }
    if engine.state.changeToken != token {
      engine.state.changeToken = token
      link.sharedStateChanged = true
    }
    if more { requestFetch(view, effects: &effects) } else { finishFetch(error: nil, effects: &effects) }
  }

  /// After a push of the shared engine: records refused with `zoneNotFound` are of a share the
  /// account lost (the fetch that says so may not have come yet): what the app did with them is
  /// told as when access ends.
  func lostShareOnPush(_ keys: [RecordKey], effects: inout [DeviceEffect]) {
    guard !keys.isEmpty else { return }
    // (Each was the device's: a change of it was in flight.)
    let after = Set(shownKeys())
    let removed = keys.filter { !after.contains($0) }
    let kept = keys.filter { after.contains($0) }
    for key in keys { stepAccessEnded.insert(key) }
    if !removed.isEmpty || !kept.isEmpty { effects.append(.fact(.accessEnded(removed: removed, kept: kept))) }
  }
}
