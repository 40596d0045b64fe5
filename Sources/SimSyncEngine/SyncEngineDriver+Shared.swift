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
    if !App.sharesRecords {
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
    return SyncRecordID(recordName: names[Int(key)], zoneID: SyncRecordZoneID(zoneName: zoneName(of: key), ownerName: userName(owner)))
  }

  /// The name of the zone record `key` is in: the one it was last saved in, else the scenario's
  /// (`create … in ZONE`), else its type's.
  func zoneName(of key: RecordKey) -> String {
    if let n = provenance.zoneOf[key], let zone = provenance.zone(n) { return zone.zoneName }
    if let zone = scenarioZone(of: key) { return zone }
    return defaultZone(ofType: knownType(of: key)).zoneName
  }

  /// The zone a share is in, named as the signed-in user's app sees it (the owner's): the zone a
  /// zone-wide share shares, or its root's.
  func zoneID(of share: Share) -> SyncRecordZoneID {
    let name: String
    if let root = share.root, Int(root) < names.count {
      name = zoneName(of: root)
    } else if share.zone > 0, Int(share.zone) <= scenarioZoneNames.count {
      name = scenarioZoneNames[Int(share.zone) - 1]
    } else {
      name = appSchema.zoneName
    }
    return SyncRecordZoneID(zoneName: name, ownerName: userName(share.owner))
  }

  /// The ``SyncShare`` of world share `share`, as the signed-in user sees it.
  func syncShare(_ share: Share, participants: [SyncShare.Participant]) -> SyncShare {
    let zone = zoneID(of: share)
    let me = userName(currentAccount ?? 0)
    if let root = share.root, Int(root) < names.count {
      return SyncShare(
        rootRecordID: SyncRecordID(recordName: names[Int(root)], zoneID: zone), owner: participants[0], participants: participants, currentUser: me)
    }
    return SyncShare(zoneID: zone, owner: participants[0], participants: participants, currentUser: me)
  }

  /// The record `key`'s parent as this device last had it (its field marked `parent`), if any.
  func parentKey(of key: RecordKey, _ view: DeviceState) -> RecordKey? {
    guard let copy = view.visibleRecord(key) ?? serverCopies[key], Int(copy.type) < parentFields.count, let f = parentFields[Int(copy.type)],
      case .ref(let p) = copy.fields[f].value, p != key
    else { return nil }
    return p
  }

  /// Whether a share handed over covers record `key` (in zone `zone`), as this device knows the
  /// record's parents: a zone-wide share, every record of its zone; a hierarchy share, its root
  /// and the records below it.
  func covers(_ share: DeliveredShare, _ key: RecordKey, zone: SyncRecordZoneID, _ view: DeviceState) -> Bool {
    guard let root = share.root else { return share.zone == zone }
    var k = key
    // (A chain longer than any hierarchy a run makes is a cycle.)
    for _ in 0..<64 {
      if k == root { return true }
      guard let p = parentKey(of: k, view) else { return false }
      k = p
    }
    return false
  }

  /// Whether a record is another account's on this device (from a share).
  func isShared(_ key: RecordKey) -> Bool {
    guard let owner = ownerOf[key] else { return false }
    return owner != currentAccount
  }

  /// Why an intent cannot be made, when it refers across zones: a record of a share and one of
  /// the account's own cannot refer to each other, as the built-in engine refuses
  /// (``UserIntent/zoneCrossing(shared:)``).
  func crossZoneReference(_ intent: UserIntent, key: RecordKey) -> String? {
    intent.zoneCrossing(shared: isShared).crosses ? UserIntent.crossZoneReason : nil
  }

  /// A create referring to a record of a share is made in that share (its owner's zone): the
  /// world's view hears of it, as the built-in engine's does.
  func madeInShare(_ intent: UserIntent, key: RecordKey, _ view: inout DeviceState) {
    guard let (target, owner) = shareOfCreate(intent) else { return }
    ownerOf[key] = owner
    // In its parent's zone (the world puts it there too).
    scenarioZones._grow(toHold: Int(key), with: nil)
    scenarioZones[Int(key)] = zoneName(of: target)
    view.driverSetShared(token: view.sharedToken, sharedKeys: [key])
  }

  /// The record of a share a create refers to, and its owner (nil: the create refers to none).
  func shareOfCreate(_ intent: UserIntent) -> (target: RecordKey, owner: Int32)? {
    guard case .create(_, _, let values) = intent else { return nil }
    for w in values {
      guard case .ref(let target) = w.value, isShared(target), let owner = ownerOf[target] else { continue }
      return (target, owner)
    }
    return nil
  }

  /// The identity of a record a create makes in a share: in the owner's zone its parent is in.
  func recordIDMadeInShare(_ intent: UserIntent, key: RecordKey) -> SyncRecordID? {
    guard let (target, _) = shareOfCreate(intent), let parent = sharedRecordID(target) else { return nil }
    return SyncRecordID(recordName: names[Int(key)], zoneID: parent.zoneID)
  }

  /// The owner of the share an intent is made in (nil: the account's own zone).
  func shareOwner(_ intent: UserIntent, key: RecordKey) -> Int32? {
    if case .create = intent { return shareOfCreate(intent)?.owner }
    return isShared(key) ? ownerOf[key] : nil
  }

  /// Why the app may refuse an intent on a record of a share it was told is read-only for its
  /// user (``SyncShare/currentUserParticipant``): the app's sharing code does not let the user
  /// edit it. Nil when the app was not told so (a refusal then counts against it).
  func readOnlyHere(_ intent: UserIntent, key: RecordKey, _ view: DeviceState) -> String? {
    guard let owner = shareOwner(intent, key: key), let me = currentAccount else { return nil }
    // The record the intent is about in the share: a create's parent, or the record itself.
    var record = key
    if case .create(_, _, let values) = intent {
      for w in values { if case .ref(let target) = w.value, isShared(target) { record = target } }
    }
    let zone = sharedRecordID(record)?.zoneID ?? SyncRecordZoneID(zoneName: zoneName(of: record), ownerName: userName(owner))
    let mine = deliveredShares.filter { $0.key >> 32 == Int64(me) && $0.value.owner == owner }.sorted { $0.key < $1.key }.map(\.value)
    // The shares handed over that cover it (all of the owner's, when none is known to).
    let covering = mine.filter { covers($0, record, zone: zone, view) }
    let permissions = (covering.isEmpty ? mine : covering).compactMap { $0.participants.first { $0.userName == userName(me) }?.permission }
    guard permissions.contains(.readOnly), !permissions.contains(.readWrite) else { return nil }
    return
      "the app does not let \(userName(me)) change \(userName(owner))'s records: their share is read-only for \(userName(me)) (its CKShare says so)"
  }

  /// The server answered a shared fetch: kept until the answer arrives.
  package func sharedFetchAnswered(requestID: UInt64, owners: [(key: RecordKey, owner: Int32)], shares: [Share]) {
    sharedAnswers[requestID] = (owners, shares)
  }

  /// The key of world share `share`, as the signed-in account was handed it, in
  /// ``deliveredShares`` (the app keeps each account's shares apart, and brings them back when
  /// it signs in again).
  func shareKey(_ share: Int) -> Int64 { Int64(currentAccount ?? -1) << 32 | Int64(share) }

  /// A share as the signed-in user sees it (its participants; nil when the user takes no part
  /// in it, or it is not active).
  func shareParticipants(_ share: Share) -> [SyncShare.Participant]? {
    guard let me = currentAccount, share.active, share.owner >= 0, share.permission(of: me) != nil else { return nil }
    var out = [SyncShare.Participant(userName: userName(share.owner), role: .owner, permission: .readWrite, acceptanceStatus: .accepted)]
    for p in share.participants {
      out.append(
        .init(
          userName: userName(p.account), role: .privateUser, permission: p.permission == .readOnly ? .readOnly : .readWrite,
          acceptanceStatus: p.accepted ? .accepted : .pending))
    }
    return out
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
    let shares = answer?.shares ?? []
    // Records no longer shared with the account, by zone: a zone of which the account still has
    // a share loses those records (and the shares that ended); any other leaves the shared
    // database.
    var revokedZones: [(zone: SyncRecordZoneID, keys: [RecordKey])] = []
    for key in revoked {
      guard let id = sharedRecordID(key) else { continue }
      if let i = revokedZones.firstIndex(where: { $0.zone == id.zoneID }) {
        revokedZones[i].keys.append(key)
      } else {
        revokedZones.append((id.zoneID, [key]))
      }
    }
    var ended: [SyncRecordZoneID] = []
    var revokedRecords: [RecordKey] = []
    for (zone, keys) in revokedZones {
      if shares.contains(where: { shareParticipants($0) != nil && zoneID(of: $0) == zone }) { revokedRecords += keys } else { ended.append(zone) }
    }
    let before = revoked.isEmpty ? [] : shownKeys()
    if !ended.isEmpty {
      deliver(.fetchedDatabaseChanges(.init(deletions: ended.map { .init(zoneID: $0, reason: .deleted) })))
      for (key, share) in deliveredShares where key >> 32 == Int64(currentAccount ?? -1) && ended.contains(share.zone) {
        deliveredShares[key] = nil
      }
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
    // Shares that ended in a zone that stays: their records (below) and themselves go.
    for (s, share) in shares.enumerated() {
      let key = shareKey(s)
      guard let delivered = deliveredShares[key], !ended.contains(delivered.zone), shareParticipants(share) == nil else { continue }
      deliveredShares[key] = nil
      announce(delivered.zone)
      deletions.append(.init(recordID: delivered.recordID, recordType: SyncShare.recordType))
    }
    var owners: [Int32] = []
    for r in records { if let owner = ownerOf[r.key], owner != currentAccount, !owners.contains(owner) { owners.append(owner) } }
    for (s, share) in shares.enumerated() where owners.contains(share.owner) || deliveredShares[shareKey(s)] != nil {
      guard let participants = shareParticipants(share), deliveredShares[shareKey(s)]?.participants != participants else { continue }
      let syncShare = syncShare(share, participants: participants)
      deliveredShares[shareKey(s)] = DeliveredShare(
        owner: share.owner, zone: syncShare.recordID.zoneID, recordID: syncShare.recordID, root: share.root, participants: participants)
      announce(syncShare.recordID.zoneID)
      modifications.append(.init(record: syncShare))
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
    // Records no longer shared in a zone that stays, and records gone from their owner's zone
    // with its deletion: a copy the device had goes.
    for key in revokedRecords where serverCopies[key] != nil || lastPending.contains(key) {
      guard let id = sharedRecordID(key) else { continue }
      announce(id.zoneID)
      deletions.append(.init(recordID: id, recordType: schema.types[Int(knownType(of: key))].name))
    }
    for key in gone where serverCopies[key] != nil {
      guard let id = sharedRecordID(key) else { continue }
      serverCopies[key] = nil
      stepAccessEnded.insert(key)
      deletions.append(.init(recordID: id, recordType: schema.types[Int(knownType(of: key))].name))
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

/// A share the app's shared engine handed over: whose, where, of what, and its participants as
/// handed.
struct DeliveredShare: Equatable {
  var owner: Int32
  /// The zone it is in (the owner's), and its record's identity there.
  var zone: SyncRecordZoneID
  var recordID: SyncRecordID
  /// The root of a hierarchy share (nil: zone-wide).
  var root: RecordKey?
  var participants: [SyncShare.Participant]
}
