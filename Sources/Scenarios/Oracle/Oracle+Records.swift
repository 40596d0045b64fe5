import Replica
@_spi(Kernel) import Simulator

extension Oracle {
  /// Presence: resurrections, delete/update conflicts, dropped events, stranded records.
  /// `incarnation`: for a record created again after a delete, the create of the incarnation
  /// judged (its intents are `intents`); only copies it made count as showing it.
  mutating func judgeRecordPresence(_ key: RecordKey, _ intents: [Intent], incarnation: IntentID? = nil) {
    guard
      let create = intents.first(where: {
        if case .create = $0.kind { return true }
        return false
      })
    else { return }
    guard case .create(let typeIndex, _) = create.kind else { return }
    let type = schema.types[Int(typeIndex)]
    let deletes = intents.filter { $0.isDelete }
    // (The creates and sets are read only against a delete: none, no list.)
    let updates =
      deletes.isEmpty
      ? []
      : intents.filter {
        if case .delete = $0.kind { return false }
        return true
      }
    // Who shows the record: every device, then the server. Names are looked up only for a report.
    var shown = world.devices.indices.map { world.shows(device: $0, key) }
    shown.append(world.serverIsLive(key))
    if let incarnation {
      for d in world.devices.indices where shown[d] { shown[d] = world.devices[d].visibleRecord(key)?.creator == incarnation }
      shown[shown.count - 1] = shown[shown.count - 1] && world.serverRecord(key)?.creator == incarnation
    }
    var holders: [(name: String, device: Int32?, visible: Bool)] {
      world.devices.map { ($0.config.name, $0.config.index, shown[Int($0.config.index)]) } + [("the server", nil, shown[shown.count - 1])]
    }
    var r: String { name(key) }
    var rRef: RecordRef { recordRef(key) }

    // A delete that happened after every create and update must win everywhere.
    if let d = deletes.first(where: { d in Self.allHappenedBefore(updates, d) }), shown.contains(true) {
      let back = holders.filter(\.visible)
      do {
        anomalies.append(
          Anomaly(
            kind: .resurrection, record: rRef, intents: [Self.id(d.id)], devices: back.compactMap { $0.device.map(deviceRef) }, at: d.trueTime,
            explanation:
              "\(r) is visible on \(back.map(\.name).joined(separator: ", ")) after settle although \(describe(d)) came after every edit of it\(resurrectionCause(key, delete: d))."
          ))
      }
    }
    // A delete concurrent with an update: either outcome is valid; say which won.
    for d in deletes {
      if let u = updates.first(where: { concurrent($0, d) }) {
        anomalies.append(
          Anomaly(
            kind: .deleteUpdateConflict, record: rRef, intents: [Self.id(d.id), Self.id(u.id)], devices: [deviceRef(d.device), deviceRef(u.device)],
            at: d.trueTime,
            explanation: "\(describe(d)) was concurrent with \(describe(u)); \(conflictOutcome(key, delete: d))."))
        break
      }
    }
    // (The creating device's names are read only for a report.)
    var origin: DeviceConfig { world.deviceConfig(Int(create.device)) }
    let onServer = world.serverHolds(key, createdBy: incarnation)
    let neverOnServer = !onServer && deletes.isEmpty
    if neverOnServer, shown[Int(create.device)] {
      anomalies.append(
        Anomaly(
          kind: .strandedRecord, record: rRef, intents: [Self.id(create.id)], devices: [deviceRef(origin.index)], at: create.trueTime,
          explanation:
            "\(r) exists only on \(origin.name) (created in \(Self.id(create.id)) at \(create.trueTime)) and never reached the server: \(strandedCause(key, type: type, device: create.device))."
        ))
      return
    }
    // An event must be on every device of its account and on the server (a device signed out,
    // or into another account, holds nothing of it).
    func member(_ i: Int) -> Bool {
      i == shown.count - 1 || world.isSignedIn(device: i, toAccountOf: key) || (world.hasSharing && world.mayShow(device: i, key))
    }
    if type.appendOnly, deletes.isEmpty, shown.indices.contains(where: { !shown[$0] && member($0) }) {
      let missing = holders.enumerated().filter { !$0.element.visible && member($0.offset) }.map(\.element)
      do {
        anomalies.append(
          Anomaly(
            kind: .droppedEvent, record: rRef, intents: [Self.id(create.id)], devices: missing.compactMap { $0.device.map(deviceRef) },
            at: create.trueTime,
            explanation:
              "the \(type.name) event \(r) (created by \(deviceRef(create.device)) in \(Self.id(create.id)) at \(create.trueTime)) was never deleted but is missing on \(missing.map(\.name).joined(separator: ", ")) after settle."
          ))
      }
    }
    // A record nobody deleted that nothing holds any more: its creation is lost.
    if !type.appendOnly, deletes.isEmpty, !shown.contains(true) {
      var cause = ""
      if let dedupe = deduplicationLoss(key, intents) {
        // Everything written to it is on the duplicate the engine kept instead.
        guard let loss = dedupe else { return }
        cause = loss
      } else {
        cause = lostEverywhereCause(key)
      }
      anomalies.append(
        Anomaly(
          kind: .lostEdit, record: rRef, intents: [Self.id(create.id)], devices: [deviceRef(origin.index)], at: create.trueTime,
          explanation:
            "\(r) (created by \(origin.name) in \(Self.id(create.id)) at \(create.trueTime)) was never deleted, yet after settle no device and not the server holds it\(cause)."
        ))
    }
  }

  /// Why a record vanished everywhere: the zone went and the devices deleted their copies.
  func lostEverywhereCause(_ key: RecordKey) -> String {
    for e in world.facts.events {
      if case .wipedOnAccountChange(let keys) = e.fact, keys.contains(key) {
        return ": \(wipedCause(at: e.time)) on \(deviceName(e.device))"
      }
      if case .setAside(let keys, let account) = e.fact, keys.contains(key) {
        return ": \(setAsideCause(account, device: e.device))"
      }
      guard case .zoneGone(let reason, let wiped, _) = e.fact, wiped.contains(key) else { continue }
      let zone =
        switch reason {
        case .encryptedDataReset: "an encrypted-data reset emptied the server"
        case .purged: "the user purged the app's data in Settings"
        case .deleted: "the app deleted its zone"
        }
      return
        ": \(zone), and \(deviceName(e.device)) deleted its copy when it learned of it at \(e.time) (\(zoneReaction))"
    }
    // A user's app that let the change go unsent, and later dropped its copy too.
    for e in world.facts.events {
      if case .appDropped(let keys, let cause) = e.fact, keys.contains(key) {
        return
          ": it never reached the server — \(Self.appDropCause(cause, at: e.time, key: key)) on \(deviceName(e.device)) — and then no copy was left"
      }
    }
    return ""
  }

  func strandedCause(_ key: RecordKey, type: RecordType, device: Int32) -> String {
    for e in world.facts.events where e.device == device {
      switch e.fact {
      case .rejected(key, let typeName):
        let finding = schema.safetyFindings().first { $0.blocks.contains(typeName) }
        let message = finding.map { $0.sentence.hasSuffix(".") ? String($0.sentence.dropLast()) : $0.sentence }
        return "the server rejected its type at \(e.time)" + (message.map { " — \($0)" } ?? "")
      case .outboxLost(let keys) where keys.contains(key):
        return "its pending upload was in an in-memory outbox, lost when the app was killed at \(e.time) (outbox=memory)"
      case .batchAbandoned(let keys, let cause) where keys.contains(key):
        return "its outbox entry was cleared when the batch was sent (unit=mark-first) and the request was cut off at \(e.time) (\(cause))"
      case .gaveUp(let keys, let error, let told) where keys.contains(key):
        return gaveUpCause(error, told: told, at: e.time, key: key, device: e.device)
      case .stalled(let keys, let error) where keys.contains(key):
        return Self.stalledCause(error, device: deviceName(e.device))
      case .wipedOnAccountChange(let keys) where keys.contains(key):
        return wipedCause(at: e.time)
      case .setAside(let keys, let account) where keys.contains(key):
        return setAsideCause(account, device: e.device)
      case .appDropped(let keys, let cause) where keys.contains(key):
        return Self.appDropCause(cause, at: e.time, key: key)
      default:
        continue
      }
    }
    if world.devices[Int(device)].account == nil { return "its device is signed out of iCloud" }
    return "it was never uploaded"
  }

  /// Which side of a delete/update conflict really won, from what the server did: it kept the
  /// record when the delete arrived, or brought it back after deleting it (the update won), or
  /// deleted it for good (the delete won).
  func conflictOutcome(_ key: RecordKey, delete d: Intent) -> String {
    var deletedAt: VirtualTime?
    var updateWon = false
    for e in world.facts.serverEvents {
      switch e {
      case .keptOverDelete(key, let by, _) where by == d.id:
        updateWon = true
      case .deleted(key, _, let t):
        if deletedAt == nil { deletedAt = t }
      case .revived(key, let t):
        if let since = deletedAt, since <= t { updateWon = true }
      default:
        break
      }
    }
    if updateWon {
      let later = world.serverRecord(key).flatMap { $0.isDeleted && $0.deletedBy != d.id ? $0.deletedBy : nil }
      return "the update won" + (later.map { " (\(Self.id($0)) deleted the record later, knowingly)" } ?? "")
    }
    return deletedAt == nil ? "the delete never took effect on the server" : "the delete won"
  }

  func resurrectionCause(_ key: RecordKey, delete d: Intent) -> String {
    for e in world.facts.events {
      // A user's app that let its pending delete go (after a CloudKit error, a kill, …).
      if case .appDropped(let keys, let cause) = e.fact, e.device == d.device, e.time >= d.trueTime, keys.contains(key) {
        return " (its delete never reached the server: \(Self.appDropCause(cause, at: e.time, delete: true)))"
      }
      if case .wipedOnAccountChange(let keys) = e.fact, keys.contains(key) {
        let who = judgesAnApp ? "the app's code" : "account=wipe"
        return " (its delete was still unsent when \(deviceName(e.device)) deleted its local data on an account change at \(e.time): \(who))"
      }
      guard case .zoneGone(let reason, _, let reuploaded) = e.fact, reason != .encryptedDataReset, reuploaded.contains(key) else { continue }
      let how = reason == .purged ? "the user purged the app's data in Settings" : "the app deleted its zone"
      return
        " (\(how); \(deviceName(e.device)) learned of it at \(e.time) and uploaded its copy again: \(zoneReaction))"
    }
    let zombie = world.devices.indices.contains { world.shows(device: $0, key) } && serverLive(key) == nil
    return zombie ? " (a device kept a row the server no longer has, e.g. after a token-expired refetch)" : ""
  }

  /// A record created again after a delete: each incarnation (a create and the intents made
  /// knowing it, up to the next create) is judged apart. The final incarnation is the one the
  /// server holds, if no create was made knowing it; else the latest create no other was made
  /// knowing (failing that, the one it held last; failing that, the latest create none was made
  /// knowing). An earlier one (a create another was made knowing) was deleted before that was
  /// made, so no copy of it may show; one made at once with the final one (two devices made the
  /// record again, neither knowing of the other) lost to it, as concurrent writes do; the final
  /// one is judged as a record of its own, its fields with the other incarnations' writes taken
  /// as deleted.
  mutating func judgeIncarnations(_ key: RecordKey, _ intents: [Intent]) {
    let (creates, final, groups) = Self.incarnations(intents, server: [world.serverRecord(key)?.creator, world.facts.serverIncarnations[key]])
    guard !creates.isEmpty else { return }
    // Which incarnation each device shows, and the server (looked up once, not per create).
    let shownCreators = world.devices.indices.map { world.devices[$0].visibleRecord(key)?.creator }
    let serverCreator = serverLive(key)?.creator
    for k in creates.indices where k != final {
      let c = creates[k]
      let updates = groups[k].filter { !$0.isDelete }
      // The first create made knowing this one.
      let next = Self.firstAfter(c, in: creates)
      let holders = shownCreators.indices.filter { shownCreators[$0] == c.id }.map(Int32.init)
      var back = holders.map(deviceName)
      if serverCreator == c.id { back.append("the server") }
      if let d = groups[k].first(where: { d in d.isDelete && updates.contains { concurrent($0, d) } }),
        let u = updates.first(where: { concurrent($0, d) })
      {
        anomalies.append(
          Anomaly(
            kind: .deleteUpdateConflict, record: recordRef(key), intents: [Self.id(d.id), Self.id(u.id)],
            devices: [deviceRef(d.device), deviceRef(u.device)],
            at: d.trueTime,
            explanation: "\(describe(d)) was concurrent with \(describe(u)); "
              + (back.isEmpty
                ? "the delete won, and \(describe(next ?? creates[final])) created the record again."
                : "the update won: the deleted record is back, although \(describe(next ?? creates[final])) created it again.")))
      }
      guard let next else {
        // Made again at once with the final incarnation: a last-writer-wins choice between them.
        let f = creates[final]
        anomalies.append(
          Anomaly(
            kind: .concurrentOverwrite, record: recordRef(key), intents: [Self.id(c.id), Self.id(f.id)],
            devices: [deviceRef(c.device), deviceRef(f.device)],
            at: c.trueTime,
            explanation:
              "\(describe(c)) and \(describe(f)) each created \(name(key)) again, neither knowing of the other; the record is \(deviceName(f.device))'s."
          ))
        continue
      }
      guard !back.isEmpty else { continue }
      let deleted = groups[k].last { $0.isDelete && $0.happenedBefore(next) }
      anomalies.append(
        Anomaly(
          kind: .resurrection, record: recordRef(key), intents: [Self.id(deleted?.id ?? next.id), Self.id(c.id)],
          devices: holders.map(deviceRef),
          at: deleted?.trueTime ?? next.trueTime,
          explanation:
            "\(name(key)) as \(describe(c)) made it is visible on \(back.joined(separator: ", ")) after settle, although "
            + (deleted.map { "\(describe($0)) deleted it" } ?? "it was deleted") + " before \(describe(next)) created it again."
        ))
    }
    judgeRecordPresence(key, groups[final], incarnation: creates[final].id)
    guard let record = serverLive(key), record.creator == creates[final].id else { return }
    judgeFields(record, intents, earlier: Set(groups.indices.filter { $0 != final }.flatMap { groups[$0] }.map(\.id)))
  }

  /// A re-created record's creates, the index of the final one (see `judgeIncarnations`; `server`:
  /// the incarnation of the server's copy, then of the one it held last, in that order of
  /// preference), and its intents by incarnation: each intent goes to the create it was made
  /// knowing — the final one if it knew that, else the latest.
  static func incarnations(_ intents: [Intent], server: [IntentID?]) -> (creates: [Intent], final: Int, groups: [[Intent]]) {
    let creates = intents.filter {
      if case .create = $0.kind { return true }
      return false
    }
    assert(isOneRecordInOrder(intents))
    let overtaken = happenedBeforeSome(creates, of: creates)
    let maximal = creates.indices.filter { !overtaken[$0] }
    let final =
      server.lazy.compactMap { s in maximal.first { creates[$0].id == s } }.first ?? maximal.last ?? max(creates.count - 1, 0)
    var groups = Array(repeating: [Intent](), count: max(creates.count, 1))
    for i in intents {
      groups[incarnation(of: i, creates: creates, final: final)].append(i)
    }
    return (creates, final, groups)
  }

  /// The incarnation an intent belongs to (see ``incarnations(_:server:)``): among the creates
  /// it was, or was made knowing, the final one if it is there, else the latest, else the
  /// first. The answer of
  /// `known.contains(final) ? final : known.last ?? 0` with
  /// `known = creates.indices.filter { creates[$0].id == i.id || creates[$0].happenedBefore(i) }`,
  /// found from the intent's context (its prefix and runs) rather than by asking each create.
  static func incarnation(of i: Intent, creates: [Intent], final: Int) -> Int {
    func known(_ c: Intent) -> Bool { c.id == i.id || c.happenedBefore(i) }
    if final < creates.count, known(creates[final]) { return final }
    // Creates above the intent's own ordinal are not in its context; below it, the latest one
    // its context holds: the last of each of its runs, from the top, then of its prefix.
    /// The index of the last create whose ordinal is at most `ordinal`, or nil.
    func lastCreate(atMost ordinal: Int32) -> Int? {
      var lo = 0
      var hi = creates.count
      while lo < hi {
        let mid = (lo + hi) / 2
        if creates[mid].ordinal <= ordinal { lo = mid + 1 } else { hi = mid }
      }
      return lo > 0 ? lo - 1 : nil
    }
    // The intent itself, if it is a create.
    var latest = lastCreate(atMost: i.ordinal).flatMap { creates[$0].id == i.id ? $0 : nil }
    var found: Int?
    for run in i.context.runs.reversed() {
      if let k = lastCreate(atMost: run.upperBound), creates[k].ordinal >= run.lowerBound, creates[k].ordinal > 0 {
        found = k
        break
      }
    }
    if found == nil, let k = lastCreate(atMost: i.context.prefix), creates[k].ordinal > 0 { found = k }
    if let f = found, known(creates[f]) { latest = max(latest ?? f, f) }
    return latest ?? 0
  }

  /// A record that came back on a device which had applied a delete that came after every edit.
  mutating func judgeTransientResurrections() {
    var reported: Set<RecordKey> = []
    for a in anomalies where a.kind == .resurrection { if let k = a.record?.key { reported.insert(k) } }
    // Of a record created again, its incarnations (found once per record, not per event).
    var incarnationGroups: [RecordKey: [[Intent]]] = [:]
    for e in world.facts.events {
      guard case .reappeared(let key, let applied) = e.fact, let intents = Int(key) < byRecord.count ? byRecord[Int(key)] : nil, !intents.isEmpty
      else { continue }
      let r = name(key)
      guard !reported.contains(key) else { continue }
      // (Of a record created again, a delete is judged against its own incarnation's edits.)
      var groups = [intents]
      if world.context.isRecreated(key) {
        if let known = incarnationGroups[key] {
          groups = known
        } else {
          groups = Self.incarnations(intents, server: [world.serverRecord(key)?.creator, world.facts.serverIncarnations[key]]).groups
          incarnationGroups[key] = groups
        }
      }
      func updates(before d: Intent) -> [Intent] {
        (groups.first { g in g.contains { $0.id == d.id } } ?? intents).filter {
          if case .delete = $0.kind { return false }
          return true
        }
      }
      // Only a delete the device had applied before the record came back counts: one made later
      // (say, after the record was revived by a concurrent update) is no reason to expect it gone.
      let log = self.log
      // (A delete the server refused and its device withdrew is not among the record's intents.)
      guard
        let d = applied.map({ log[$0] }).first(where: { d in
          d.keptInstead == nil && intents.contains { $0.id == d.id } && updates(before: d).allSatisfy { $0.happenedBefore(d) }
        })
      else { continue }
      reported.insert(key)
      anomalies.append(
        Anomaly(
          kind: .resurrection, record: recordRef(key), intents: [Self.id(d.id)], devices: [deviceRef(e.device)], at: e.time,
          explanation:
            "\(r) came back on \(deviceRef(e.device)) at \(e.time) after it had applied \(describe(d)), which came after every edit (a transient resurrection)."
        ))
    }
  }

  /// Liveness: after settle, with every fault healed, no device may still hold unsent changes or
  /// be in a retry loop (`stalled-sync`, one per device, saying what it waits on).
  mutating func judgeLiveness() {
    for d in world.devices.indices where world.mayHaveStalled(device: d) {
      let device = world.devices[d]
      let unsent = device.outbox.entries.filter { !$0.failed }.map(\.key)
      guard !unsent.isEmpty || device.waitingOn != nil else { continue }
      var what: [String] = []
      if !unsent.isEmpty {
        let names = unsent.prefix(5).map(name).joined(separator: ", ") + (unsent.count > 5 ? ", …" : "")
        what.append("still holds \(unsent.count) unsent change\(unsent.count == 1 ? "" : "s") (\(names))")
      }
      if let w = device.waitingOn {
        what.append(
          "is waiting on \(w.error)" + (w.retryAfter.map { " (retry after \(VirtualTime.zero + $0))" } ?? "")
            + " after \(w.attempts) failed attempt\(w.attempts == 1 ? "" : "s") since \(w.since)"
            + (judgesAnApp ? Self.appWaitAdvice(w.error) : Self.waitAdvice(w.error, world.config.policy.settings)))
      } else if !world.facts.settled {
        what[what.count - 1] += ": the run did not settle — \(world.facts.unsettledReason ?? "sync did not reach quiescence")"
      }
      anomalies.append(
        Anomaly(
          kind: .stalledSync, record: unsent.first.map(recordRef), devices: [deviceRef(device.config.index)],
          at: device.waitingOn?.since ?? world.facts.settleStart,
          explanation: "after settle, with every fault healed, \(device.config.name) " + what.joined(separator: " and ") + "."))
    }
    judgeRefusedShares()
  }

  /// A hierarchy share the server refused because the root's change tag had moved, still not
  /// made after settle: the user shared, and nobody will ever see it (`stalled-sync`, once per
  /// device).
  mutating func judgeRefusedShares() {
    for r in world.sharing.refused where world.deviceAccount(Int(r.device)) != nil {
      guard let root = world.sharing.shares[Int(r.share)].root else { continue }
      let device = world.devices[Int(r.device)]
      guard !anomalies.contains(where: { $0.kind == .stalledSync && $0.devices.contains { $0.index == device.config.index } }) else { continue }
      let moved = childSaves(root).map {
        "; saving \($0) (a child of \(name(root))) moved \(name(root))'s change tag on the server, and no fetch reports that"
      }
      anomalies.append(
        Anomaly(
          kind: .stalledSync, record: recordRef(root), devices: [deviceRef(device.config.index)], at: r.since,
          explanation:
            "after settle, with every fault healed, \(device.config.name) still cannot share \(name(root)) as \(words.share(r.share)): the server refused the share \(r.attempts) time\(r.attempts == 1 ? "" : "s") since \(r.since) with serverRecordChanged, because the engine saves the root with the change tag of the copy it last fetched (share-root=as-known)"
            + (moved ?? "") + "."))
    }
  }

  /// The children of `root` (records whose `parent` reference names it) that reached the
  /// server, for saying why its change tag moved: `i1`.
  func childSaves(_ root: RecordKey) -> String? {
    let owner = world.account(ofRecord: root)
    guard owner >= 0, owner < world.servers.count else { return nil }
    let children = world.servers[owner].liveRecords.filter { world.parent(of: $0.key) == root }.map { name($0.key) }
    return children.isEmpty ? nil : children.prefix(3).joined(separator: ", ")
  }

  /// What keeps a user's app waiting on `error`, in a clause: what its code did not do.
  static func appWaitAdvice(_ error: CloudKitError) -> String {
    switch error {
    case .zoneNotFound, .userDeletedZone:
      ": the app's code never saved the zone its records go to (CloudKit saves no record in a zone the database does not have; Apple's sample adds .saveZone to the state's pendingDatabaseChanges on zoneNotFound, and sends the record again)"
    case .quotaExceeded: ": the account's iCloud storage is full, and only the user can free it"
    default: ""
    }
  }

  /// What keeps a device waiting on `error`, in a clause.
  static func waitAdvice(_ error: CloudKitError, _ s: PolicySettings) -> String {
    switch error {
    case .quotaExceeded: return ": the account's iCloud storage is full, and only the user can free it"
    case .requestRateLimited, .zoneBusy, .serviceUnavailable:
      return s.retryAfter == .ignore
        ? ": the engine retries before the retry-after ends, and each early retry is refused again (retry-after=ignore)" : ""
    case .limitExceeded:
      return s.split == .off ? ": the engine sends the same oversized batch again (split=off)" : ""
    default: return ""
    }
  }

  /// After settle every device must show what the server shows.
  mutating func judgeDivergence() {
    let stalled = Set(anomalies.filter { $0.kind == .stalledSync }.flatMap { $0.devices.map(\.index) })
    if !world.facts.settled && stalled.isEmpty {
      anomalies.append(
        Anomaly(
          kind: .divergence, record: nil, at: world.facts.settleStart,
          explanation: "the run did not settle: \(world.facts.unsettledReason ?? "sync did not reach quiescence")."))
    }
    // A difference on a record already reported as stranded, dropped or resurrected is that
    // anomaly; divergence reports the first difference nothing else explains.
    let explained = Set(anomalies.filter { [.strandedRecord, .droppedEvent, .resurrection].contains($0.kind) }.compactMap(\.record?.key))
    // Per account (computed when a device needs it): the server's live records, all and those
    // nothing above explains.
    var serverViews: [(all: [RecordState], unexplained: [RecordState])?] = Array(repeating: nil, count: world.servers.count)
    converged = world.facts.settled
    if !stalled.isEmpty { converged = false }
    // Each signed-in device against its own account's server (a signed-out one syncs nothing).
    for d in world.devices.indices where !stalled.contains(Int32(d)) {
      guard let account = world.deviceAccount(d).map(Int.init) else { continue }
      if serverViews[account] == nil {
        let all = world.servers.withUnsafeBufferPointer { $0[account].liveRecords }
        serverViews[account] = (all, explained.isEmpty ? all : all.filter { !explained.contains($0.key) })
      }
      var (allServer, server) = serverViews[account]!
      var all = world.visibleRecords(device: d)
      if world.hasSharing {
        // What is shared with the account is expected too; a copy it may not see is a leak
        // (reported as `access-leak`), not a difference. (A record of another account in this
        // account's database — carried over by an account change — is that leak too.)
        func mayShow(_ r: RecordState) -> Bool { world.mayShow(device: d, r.key) }
        allServer = allServer.filter(mayShow)
        server = server.filter(mayShow)
        let shared = sharedWith(Int32(account))
        if !shared.isEmpty {
          allServer = (allServer + shared).sorted { $0.key < $1.key }
          server = (server + shared.filter { !explained.contains($0.key) }).sorted { $0.key < $1.key }
        }
        all = all.filter(mayShow)
      }
      let version = Int(world.devices[d].appVersion)
      if version < world.context.rules.latestVersion {
        // An older app version shows neither the types nor the fields it does not know.
        all = seenBy(version: version, all)
        allServer = seenBy(version: version, allServer)
        server = seenBy(version: version, server)
      }
      // (With nothing explained, the whole comparison is the one to report.)
      let whole = converged || explained.isEmpty ? firstDifference(all, allServer) : nil
      if whole != nil { converged = false }
      if let difference = explained.isEmpty ? whole : firstDifference(all.filter { !explained.contains($0.key) }, server) {
        let config = world.deviceConfig(d)
        anomalies.append(
          Anomaly(
            kind: .divergence, record: difference.record, field: difference.field, devices: [deviceRef(config.index)],
            explanation:
              "after settle \(config.name) and the server differ: \(difference.text)\(divergenceCause(device: Int32(d), difference.record.key))."))
      }
    }
  }

  /// Records as an app on `version` sees them: without the types it does not know, and with the
  /// fields it does not know at their defaults.
  func seenBy(version: Int, _ records: [RecordState]) -> [RecordState] {
    let rules = world.context.rules
    return records.compactMap { r in
      guard schema.types[Int(r.type)].since <= version else { return nil }
      var r = r
      for f in r.fields.indices where !rules.knows(version: version, type: r.type, field: f) {
        r.fields[f] = FieldValue(value: schema.types[Int(r.type)].fields[f].initialValue, writer: 0, stamp: .origin)
      }
      return r
    }
  }

  /// Why a device's copy of a record differs from the server's, when its engine discarded a
  /// fetched version: `; phone dropped …`.
  func divergenceCause(device d: Int32, _ key: RecordKey) -> String {
    for e in world.facts.events where e.device == d {
      switch e.fact {
      case .orphanDropped(key, let parent):
        return
          "; \(deviceName(d)) discarded a fetched version of \(name(key)) at \(e.time) because it referred to \(name(parent)), not on the device yet (orphans=drop), and the change token moved past it, so it never fetched that version again"
      case .droppedUnknownFields(key, let fields, let version):
        let what =
          fields.isEmpty
          ? "\(name(key)), of a type it did not know," : fields.map { words.field(key, Int($0)) }.joined(separator: ", ") + " of \(name(key))"
        return
          "; \(deviceName(d)) discarded \(what) when it fetched it at \(e.time) while it ran app version \(version) (unknown-fields=drop), and after upgrading it never fetched it again: the value was never backfilled"
      default:
        continue
      }
    }
    return ""
  }

  func firstDifference(_ mine: [RecordState], _ theirs: [RecordState]) -> (record: RecordRef, field: FieldRef?, text: String)? {
    var i = 0
    var j = 0
    while i < mine.count || j < theirs.count {
      if j >= theirs.count || (i < mine.count && mine[i].key < theirs[j].key) {
        return (recordRef(mine[i].key), nil, "\(name(mine[i].key)) is on the device but not on the server")
      }
      if i >= mine.count || theirs[j].key < mine[i].key {
        return (recordRef(theirs[j].key), nil, "\(name(theirs[j].key)) is on the server but not on the device")
      }
      let a = mine[i]
      let b = theirs[j]
      for f in a.fields.indices where !sameVisible(a.fields[f].value, b.fields[f].value) {
        let field = fieldName(a.type, Int32(f))
        return (
          recordRef(a.key), FieldRef(index: f, name: field),
          "\(name(a.key)).\(field) is \(render(a.fields[f].value)) on the device and \(render(b.fields[f].value)) on the server"
        )
      }
      i += 1
      j += 1
    }
    return nil
  }

  /// Whether a user sees the same value (text compared without its tombstones).
  func sameVisible(_ a: Value, _ b: Value) -> Bool {
    guard case .text(let x) = a, case .text(let y) = b else { return a == b }
    if x == y { return true }
    var i = x.atoms.startIndex
    var j = y.atoms.startIndex
    while true {
      while i < x.atoms.endIndex, !x.atoms[i].isVisible { i += 1 }
      while j < y.atoms.endIndex, !y.atoms[j].isVisible { j += 1 }
      if i == x.atoms.endIndex || j == y.atoms.endIndex { return i == x.atoms.endIndex && j == y.atoms.endIndex }
      if x.atoms[i].scalar != y.atoms[j].scalar { return false }
      i += 1
      j += 1
    }
  }
}
