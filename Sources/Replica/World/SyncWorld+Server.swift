@_spi(Kernel) import Simulator

extension SyncWorld {
  /// The server handles a delivered request and answers.
  mutating func serverReceive(_ message: Message, from d: Int32, seq: Int) {
    let device = NodeID(index: Int(d))
    // The database of the device's account (a request sent under another account was cut off
    // by the change, so it never gets here).
    guard let account = deviceAccount(Int(d)).map(Int.init) else { return }
    switch message {
    case .push(let id, let writes, let zone):
      if hasSharing {
        sharedPush(id: id, writes, zone: zone, from: d, account: account, seq: seq)
        return
      }
      var unused: [RecordKey] = []
      let (results, changed) = store(writes, in: account, zone: zone, from: d, seq: seq, stored: &unused)
      send(.pushReply(requestID: id, results: results), from: serverNode, to: device, session: 0)
      if changed { notifyDevices(of: Int32(account), except: d) }
    case .fetch(let id, let token, let zone):
      let reply = servers[account].fetch(token: token, from: d, zone: zone, at: now, retention: config.policy.settings.retention)
      send(.fetchReply(requestID: id, reply: reply), from: serverNode, to: device, session: 0)
    case .fetchShared(let id, let token):
      tellDriverOfSharedFetch(id, device: d, account: Int32(account), token: token)
      send(.fetchReply(requestID: id, reply: sharedFetch(account: Int32(account), token: token)), from: serverNode, to: device, session: 0)
    case .zones(let id, let changes, let zone):
      if servers[account].deletesAZone(changes, zone: zone) {
        // An app deleting a zone its database has: the world's zone deletion, by that device.
        deleteZone(by: d, reason: .deleted, tellingTheApp: false)
      }
      let results = servers[account].changeZones(changes, from: d, at: now)
      send(.zonesReply(requestID: id, results: results), from: serverNode, to: device, session: 0)
    case .pushReply, .fetchReply, .notify, .zonesReply:
      break
    }
  }

  /// Stores `writes` in `account`'s database, as sent by device `d` knowing `zone` deletions,
  /// with the oracle's and the pictures' bookkeeping; the results as the device hears them
  /// (a lost answer is `serverResponseLost`), and whether anything changed; with sharing, the
  /// records saved or deleted are added to `stored` (those whose answer is lost too).
  mutating func store(
    _ writes: [RecordWrite], in account: Int, zone: Int32, from d: Int32, seq: Int, stored: inout [RecordKey]
  ) -> ([WriteResult], Bool) {
    let wasDeleted = writes.map { servers[account].records.isDeleted($0.record.key) }
    // Asset uploads read the device's files while the request travels.
    var fileErrors: [CloudKitError?]?
    if context.rules.hasAssets {
      let device = devices[Int(d)]
      let problems = writes.map { device.uploadProblem($0, server: servers[account].records[$0.record.key], rules: context.rules) }
      if problems.contains(where: { $0 != nil }) { fileErrors = problems }
    }
    var (results, changed, lostAnswers) = servers[account].push(
      writes, from: d, zone: zone, at: now, policy: config.policy, context: context, fileErrors: fileErrors)
    if config.trackCausality { noteSent(writes, results) }
    noteServerEvents(writes, results, wasDeleted: wasDeleted, account: account)
    // A record of another account saved into this one's database (an app that uploads what it
    // kept from the account signed in before): the oracle's `access-leak`.
    for (w, r) in zip(writes, results) where !w.isDelete && self.account(ofRecord: w.record.key) != account {
      if case .saved = r, !hasSharing || permission(of: Int32(account), on: w.record.key) == nil {
        facts.serverEvents.append(.savedIntoAnotherAccount(w.record.key, account: Int32(account), device: d, at: now))
      }
    }
    if !context.recreatedKeys.isEmpty {
      for w in writes where context.isRecreated(w.record.key) {
        if let copy = servers[account].records[w.record.key] { facts.serverIncarnations[w.record.key] = copy.creator }
      }
    }
    if config.trackCausality {
      for case .saved(let stored) in results {
        if config.recordObservations { facts.observations.append(.serverStored(copy: stored, at: now)) }
        stored.forEachProvenance { facts.reachedServer[Int($0)] = true }
      }
    }
    if config.keepsEvents {
      for (w, r) in zip(writes, results) { note(.decided(message: seq, write: w, result: r)) }
    }
    if hasSharing {
      for i in results.indices {
        switch results[i] {
        case .saved:
          stored.append(writes[i].record.key)
          noteTaken(writes[i])
        case .deleted:
          stored.append(writes[i].record.key)
          noteTaken(writes[i])
        default: break
        }
      }
    }
    // `serverResponseLost`: applied above, but the device only hears that it failed.
    for i in lostAnswers { results[i] = .failed(.serverResponseLost, retryAfter: nil) }
    return (results, changed)
  }

  /// A push notification to the signed-in devices of `account` but `except` (as the push
  /// setting says).
  mutating func notifyDevices(of account: Int32, except d: Int32? = nil) {
    guard let p = config.push else { return }
    for other in devices.indices where other != d.map(Int.init) && deviceAccount(other) == account {
      if pushRNG.chance(p) { send(.notify, from: serverNode, to: NodeID(index: other), session: 0) }
    }
  }

  /// A push when something is shared: each write goes to the database of its record's owner —
  /// the device's own account's, or, for a record another account shares with it, the owner's,
  /// refused with `permissionFailure` when the share is read-only for the account and with
  /// `zoneNotFound` when it has no access any more — and the
  /// accounts that may see a changed record hear of it in their shared databases.
  mutating func sharedPush(id: UInt64, _ writes: [RecordWrite], zone: Int32, from d: Int32, account: Int, seq: Int) {
    func database(_ w: RecordWrite) -> Int32 { self.database(of: w, from: Int32(account)) }
    var owners: [Int32] = []
    for w in writes {
      let o = database(w)
      if !owners.contains(o) { owners.append(o) }
    }
    var results = [WriteResult](repeating: .deleted, count: writes.count)
    var changedOwners: [Int32] = []
    for owner in owners {
      var indices: [Int] = []
      for i in writes.indices where database(writes[i]) == owner {
        let may = owner == Int32(account) ? .readWrite : permission(of: Int32(account), on: writes[i].record.key)
        if may != .readWrite {
          // Read-only: refused. No access at all: the shared zone is not in the account's
          // shared database any more. Access to the owner's zone through a share that does not
          // cover this record (outside the shared hierarchy, or in another zone): refused for
          // permission too (sqlite-data #312 reports permissionFailure for a record saved in a
          // shared zone outside the hierarchy of its shared root).
          let recordZone = self.zone(of: writes[i].record.key)
          let reachesZone =
            may == nil && sharing.judgesPerRecord
            && sharing.shares.contains { $0.owner == owner && $0.permission(of: Int32(account)) != nil && self.zone(of: $0) == recordZone }
          results[i] = .failed(may == nil && !reachesZone ? .zoneNotFound : .permissionFailure, retryAfter: nil)
          if config.keepsEvents { note(.decided(message: seq, write: writes[i], result: results[i])) }
        } else {
          indices.append(i)
        }
      }
      guard !indices.isEmpty else { continue }
      let group = indices.map { writes[$0] }
      let epoch = owner == Int32(account) ? zone : servers[Int(owner)].zoneEpoch
      var stored: [RecordKey] = []
      let (groupResults, changed) = store(group, in: Int(owner), zone: epoch, from: d, seq: seq, stored: &stored)
      for (j, i) in indices.enumerated() { results[i] = groupResults[j] }
      if changed {
        changedOwners.append(owner)
        sharedRecordsChanged(stored, owner: owner)
      }
    }
    send(.pushReply(requestID: id, results: results), from: serverNode, to: NodeID(index: Int(d)), session: 0)
    for owner in changedOwners { notifyDevices(of: owner, except: d) }
  }

  /// Which intents reached the server (``WorldFacts/reachedServer``): a delete carries its
  /// delete; a save carries the writers of the fields it says it changed. A write the server
  /// refused with a CloudKit error (throttled, over the limits, a `reject` line, rolled back
  /// in an atomic zone) did not reach it; one whose answer is lost did.
  mutating func noteSent(_ writes: [RecordWrite], _ results: [WriteResult]) {
    // (Read in place: no copy of a write to retain and release.)
    for i in writes.indices {
      if case .failed = results[i] { continue }
      if config.recordObservations {
        facts.observations.append(.serverReceived(copy: writes[i].record, isDelete: writes[i].isDelete, changed: writes[i].changed, at: now))
      }
      if writes[i].isDelete {
        facts.reachedServer[Int(writes[i].record.deletedBy)] = true
      } else {
        writes[i].record.forEachProvenance(ofFields: writes[i].changed) { facts.reachedServer[Int($0)] = true }
      }
    }
  }

  /// With sharing: the intents a write the server took carried (``WorldFacts/takenByServer``).
  mutating func noteTaken(_ w: RecordWrite) {
    if config.recordObservations { facts.observations.append(.serverTook(copy: w.record, isDelete: w.isDelete, changed: w.changed, at: now)) }
    if w.isDelete {
      facts.takenByServer.insert(w.record.deletedBy)
    } else {
      w.record.forEachProvenance(ofFields: w.changed) { facts.takenByServer.insert($0) }
    }
  }

  /// What became of deletes, and of saves of deleted records (``ServerEvent``).
  mutating func noteServerEvents(_ writes: [RecordWrite], _ results: [WriteResult], wasDeleted: [Bool], account: Int) {
    for i in writes.indices {
      let key = writes[i].record.key
      let isDelete = writes[i].isDelete
      switch results[i] {
      case .deleted where isDelete && !wasDeleted[i]:
        if let t = servers[account].records[key], t.isDeleted { facts.serverEvents.append(.deleted(key, by: t.deletedBy, at: now)) }
      case .saved(let kept) where isDelete:
        if !kept.isDeleted { facts.serverEvents.append(.keptOverDelete(key, delete: writes[i].record.deletedBy, at: now)) }
      case .saved(let stored) where wasDeleted[i] && !stored.isDeleted:
        facts.serverEvents.append(.revived(key, at: now))
      default:
        break
      }
    }
  }
}
