@_spi(Kernel) import Simulator

/// The CloudKit-like server: one zone of records with change tags, a change log addressed by
/// tokens, deletions kept for the retention window and then purged, and schema validation.
/// A pure state machine: requests in, replies out; merge decisions go through the policy.
package struct ServerState: Sendable {
  package let schema: Schema
  /// Per type: whether uploads are accepted (CloudKit-safe and deployed).
  var acceptsType: [Bool]
  /// Live records, tombstones and hard-delete markers, by key.
  package private(set) var records = RecordTable()
  /// The change-log position of each record's latest change.
  var positions: [Int64] = []
  /// The change log: (position, key), positions increasing. Older entries of a record are
  /// skipped on read (`positions[key]` tells the latest).
  var log: [(position: Int64, key: RecordKey)] = []
  /// The latest change-log position (the token of a device that has seen everything).
  package private(set) var head: Int64 = 0
  /// The newest position of a purged deletion: a token older than this has missed it.
  package private(set) var purgedThrough: Int64 = 0
  /// Deletions in the order they happened, for purging after the retention window.
  var deletions: [(time: VirtualTime, key: RecordKey, position: Int64)] = []
  var deletionsStart = 0
  /// Per record created again after a delete: the devices that created its earlier
  /// incarnations (a fetch from no token tells them of its deletion too). Empty without
  /// re-creates.
  var earlierCreators: [RecordKey: [Int32]] = [:]
  var nextTag: Int64 = 1
  /// Records per fetch page.
  package var pageSize = 200
  /// Limits, quota, throttling and atomicity.
  package var conditions: ServerConditions
  /// Active `reject` lines, in the order they began.
  package private(set) var rules: [RejectRule] = []
  /// Zone deletions so far; a request from a device that has not reacted to the latest one is
  /// answered with it.
  package private(set) var zoneEpoch: Int32 = 0
  /// Why the zone was last deleted (nil: never).
  /// Every zone deletion's reason, in order (epoch `e` is `zoneDeletions[e - 1]`).
  package private(set) var zoneDeletions: [ZoneDeletionReason] = []

  /// What a device that has reacted to `zone` deletions is told of the ones since: the one that
  /// asks most of it — a purge (nothing may come back) over the app's deletion over a reset
  /// (upload everything again). Nil when it is up to date.
  func deletionSince(_ zone: Int32) -> ZoneDeletionReason? {
    guard zone < zoneEpoch, zone >= 0 else { return nil }
    let since = zoneDeletions[Int(zone)...]
    if since.contains(.purged) { return .purged }
    if since.contains(.deleted) { return .deleted }
    return .encryptedDataReset
  }
  /// Whether the zone exists (a device that has reacted to its deletion re-creates it).
  package private(set) var zoneExists = true
  /// For a user's app: the zones its database has, by the number the run gives each name
  /// (nil: the built-in engine, whose records live in the world's one zone, always there). An
  /// app saves a zone before it saves records in it; a zone deletion takes every zone of the
  /// database with its records (the world keeps one zone of records per database).
  package var appZones: [Int32]?
  /// Bytes of live records stored (kept only when there is a quota).
  package private(set) var usedBytes: Int64 = 0
  /// Throttling, per device: refused until this time; the wait first given; early returns since.
  var lockedUntil: [VirtualTime] = []
  var lockBase: [SimDuration] = []
  var strikes: [Int] = []
  /// Throttling windows: per device (window number, requests in it), and the app's.
  var deviceWindow: [(window: Int64, count: Int)] = []
  var appWindow: (window: Int64, count: Int) = (-1, 0)

  package init(schema: Schema, conditions: ServerConditions = ServerConditions()) {
    self.schema = schema
    self.conditions = conditions
    acceptsType = schema.types.indices.map { schema.acceptsUploads(ofType: $0) }
    hasContent = schema.types.contains { $0.fields.contains { $0.kind == .asset || $0.kind == .bytes } }
  }

  /// Whether any type has a field that can hold content by size (an asset, or sized bytes):
  /// only then is a record's size checked against CloudKit's per-record limits.
  let hasContent: Bool

  /// CloudKit's limit on a record's own data, assets excluded (Apple, `CKRecord`: 1 MB).
  package static let maxRecordBytes: Int64 = 1_000_000
  /// CloudKit's limit on one asset file (Apple, CloudKit Web Services: data size limits, 50 MB).
  package static let maxAssetBytes: Int64 = 50_000_000

  /// Whether a saved record is over CloudKit's per-record limits: its inline data over 1 MB, or
  /// an asset over 50 MB. (The upper bound first: most records are far below.)
  static func overRecordLimits(_ r: RecordState) -> Bool {
    (r.byteSizeUpperBound > maxRecordBytes && r.inlineByteSize > maxRecordBytes) || r.largestAsset > maxAssetBytes
  }

  /// Whether storage use is counted (there is a quota).
  var tracksUsage: Bool { conditions.quota != nil }

  /// Bytes free in the account's storage (nil: no quota).
  package var freeBytes: Int64? {
    conditions.quota.map { $0 - conditions.usedByOthers - usedBytes }
  }

  /// The user frees `bytes` of the account's storage used by other data (and, past that,
  /// buys more storage).
  package mutating func freeStorage(_ bytes: Int64) {
    let fromOthers = min(bytes, conditions.usedByOthers)
    conditions.usedByOthers -= fromOthers
    if let q = conditions.quota { conditions.quota = q + (bytes - fromOthers) }
  }

  /// Deletes the zone and everything in it, for `reason`: no tombstones are left, every change
  /// token expires, and each device is told at its next request.
  package mutating func deleteZone(_ reason: ZoneDeletionReason) {
    records = RecordTable()
    positions = []
    log = []
    deletions = []
    deletionsStart = 0
    // Every token from before the deletion expires (the head moves on, so one fetched after
    // it does not).
    head += 1
    purgedThrough = head
    usedBytes = 0
    zoneEpoch += 1
    zoneDeletions.append(reason)
    zoneExists = false
    if appZones != nil { appZones = [] }
  }

  /// Whether an app's zone change from a device that has reacted to `zone` deletions deletes a
  /// zone the database has now (the world then deletes it, with every record, as a zone
  /// deletion by that device).
  package func deletesAZone(_ changes: [ZoneChange], zone: Int32) -> Bool {
    guard deletionSince(zone) == nil, let zones = appZones else { return false }
    return changes.contains { $0.isDelete && zones.contains($0.zone) }
  }

  /// Handles an app's zone saves and deletes: a save makes the zone (or finds it there); a
  /// delete of a zone the database has is done by the world (``deletesAZone(_:zone:)``), one of
  /// a zone it does not have — already deleted, or never made — succeeds with nothing to do
  /// (Apple does not document an error for it). A throttled request fails as a whole.
  package mutating func changeZones(_ changes: [ZoneChange], from device: Int32, at now: VirtualTime) -> [ZoneChangeResult] {
    if let wait = admit(device, at: now) { return Array(repeating: .failed(.requestRateLimited, retryAfter: wait), count: changes.count) }
    for c in changes where !c.isDelete {
      if appZones == nil { appZones = [] }
      if !appZones!.contains(c.zone) { appZones!.append(c.zone) }
    }
    return Array(repeating: .done, count: changes.count)
  }

  /// Starts a `reject` line.
  package mutating func addRule(_ rule: RejectRule) { rules.append(rule) }

  /// Ends every `reject` line (settle heals faults).
  package mutating func endRules() { rules.removeAll() }

  /// The rule in force for `key` at `now` (the latest begun wins), dropping ended ones.
  mutating func rule(for key: RecordKey, at now: VirtualTime) -> RejectRule? {
    guard !rules.isEmpty else { return nil }
    rules.removeAll { $0.until <= now }
    return rules.last { $0.keys.contains(key) }
  }

  /// Throttling: whether device `d`'s request at `now` is admitted (nil) or refused with a
  /// retry-after. A request over a budget is refused until its window ends; one that comes back
  /// before its retry-after is refused again and doubles the wait, up to an hour.
  package mutating func admit(_ d: Int32, at now: VirtualTime) -> SimDuration? {
    guard let throttle = conditions.throttle else { return nil }
    let i = Int(d)
    if lockedUntil.count <= i {
      let n = i + 1 - lockedUntil.count
      lockedUntil.append(contentsOf: repeatElement(VirtualTime.zero, count: n))
      lockBase.append(contentsOf: repeatElement(SimDuration.zero, count: n))
      strikes.append(contentsOf: repeatElement(0, count: n))
      deviceWindow.append(contentsOf: repeatElement((window: Int64(-1), count: 0), count: n))
    }
    if now < lockedUntil[i] {
      strikes[i] += 1
      let wait = min(lockBase[i] * Int64(1 << min(strikes[i], 20)), .hours(1))
      lockedUntil[i] = now + wait
      return wait
    }
    var refusal: SimDuration?
    func count(_ budget: RequestBudget, _ w: inout (window: Int64, count: Int)) {
      let window = now.nanoseconds / budget.window.nanoseconds
      if w.window != window { w = (window, 0) }
      w.count += 1
      if w.count > budget.requests {
        let end = VirtualTime(nanoseconds: budget.window.nanoseconds * (window + 1))
        refusal = max(refusal ?? .zero, end - now)
      }
    }
    if let b = throttle.perDevice { count(b, &deviceWindow[i]) }
    if let b = throttle.app { count(b, &appWindow) }
    guard let wait = refusal else {
      strikes[i] = 0
      return nil
    }
    lockedUntil[i] = now + wait
    lockBase[i] = wait
    strikes[i] = 0
    return wait
  }

  /// The live records, in key order.
  package var liveRecords: [RecordState] { records.liveValues }

  /// Handles a push. Returns the per-write results, whether anything changed, and the writes
  /// whose answer is lost (`serverResponseLost`: applied, but the device is told it failed).
  /// A request over the throttle's budget or CloudKit's limits fails as a whole; in an atomic
  /// zone one failure fails every write.
  package mutating func push(
    _ writes: [RecordWrite], from device: Int32, zone: Int32 = 0, at now: VirtualTime, policy: any SyncPolicy, context: MergeContext,
    fileErrors: [CloudKitError?]? = nil
  ) -> (
    results: [WriteResult], changed: Bool, lostAnswers: [Int]
  ) {
    purge(now: now, retention: policy.settings.retention)
    if let wait = admit(device, at: now) {
      return (Array(repeating: .failed(.requestRateLimited, retryAfter: wait), count: writes.count), false, [])
    }
    if let reason = deletionSince(zone) {
      return (Array(repeating: .failed(reason.saveError, retryAfter: nil), count: writes.count), false, [])
    }
    zoneExists = true  // a device that knows of the deletion re-creates the zone by saving to it
    if writes.count > conditions.maxRecordsPerRequest || overByteLimit(writes) {
      return (Array(repeating: .failed(.limitExceeded, retryAfter: nil), count: writes.count), false, [])
    }
    // (An app's batch says whether it is atomic; the built-in engine's follow `zone atomic`.)
    let before = (writes.first?.atomic ?? conditions.atomic) ? self : nil
    var results: [WriteResult] = []
    results.reserveCapacity(writes.count)
    var changed = false
    var lostAnswers: [Int] = []
    // With checked references, what the request itself saves may be referred to.
    // (Not those a reject line or the schema refuses: a parent refused in the request is not
    // saved by it.)
    let savedHere: Set<RecordKey> =
      conditions.checksReferences && context.rules.hasReferences
      ? Set(
        writes.filter { w in
          !w.isDelete && acceptsType[Int(w.record.type)] && rule(for: w.record.key, at: now).map { $0.error == .serverResponseLost } ?? true
        }.map(\.record.key)) : []
    for write in writes {
      let key = write.record.key
      let type = Int(write.record.type)
      // An asset whose file the upload could not read: the record is not saved (the error is
      // the device's, before the record reaches the zone).
      if let fileErrors, let error = fileErrors[results.count] {
        results.append(.failed(error, retryAfter: nil))
        continue
      }
      if write.zone != 0, let zones = appZones, !zones.contains(write.zone) {
        // An app's record in a zone the database does not have (never saved, or deleted).
        results.append(.failed(.zoneNotFound, retryAfter: nil))
        continue
      }
      guard acceptsType[type] else {
        results.append(.rejected(typeName: schema.types[type].name))
        continue
      }
      // A record over CloudKit's per-record limits fails alone with `limitExceeded` ("record too
      // large"; apple/sample-cloudkit-sync-engine #7, SyncKit #30): no split can help.
      if hasContent, !write.isDelete, Self.overRecordLimits(write.record) {
        results.append(.failed(.limitExceeded, retryAfter: nil))
        continue
      }
      // (A save of a record deleted here is answered as such first: the reference does not matter.)
      if conditions.checksReferences, !write.isDelete, context.rules.hasReferences, !records.isDeleted(key),
        context.rules.refFields[type].contains(where: { ref in
          if case .ref(let target) = write.record.fields[Int(ref.field)].value { return !records.isLive(target) && !savedHere.contains(target) }
          return false
        })
      {
        results.append(.failed(.referenceViolation, retryAfter: nil))
        continue
      }
      // (On an app's server a full iCloud account still takes deletes, which free space: a
      // `quotaExceeded` line refuses its saves only. The built-in engines' runs are unchanged.)
      if let rule = rule(for: key, at: now), !(write.isDelete && rule.error == .quotaExceeded && appZones != nil) {
        if rule.error == .serverResponseLost {
          lostAnswers.append(results.count)
        } else {
          results.append(.failed(rule.error, retryAfter: rule.retryAfter))
          continue
        }
      }
      var current = records[key]
      var laterIncarnation = false
      if !context.recreatedKeys.isEmpty, let c = current, c.creator != write.record.creator, context.isRecreated(key) {
        // A record created again after a delete: its incarnations are told apart by their
        // creating intent (a later one has a larger id).
        if write.record.creator < c.creator {
          if !write.isDelete, !c.isDeleted, write.baseTag != 0, write.baseTag == c.changeTag {
            // A save carrying the change tag of the record the server has now: CloudKit takes
            // it, whatever the device's copy was made from (the device merged into that version).
            var onto = write
            onto.record.creator = c.creator
            onto.record.creatorDevice = c.creatorDevice
            if case .store(var record) = policy.serverSave(onto, current: c, context: context) {
              record.creator = c.creator
              record.creatorDevice = c.creatorDevice
              _store(&record, at: now)
              results.append(.saved(record))
              changed = true
            } else {
              results.append(.conflict(server: c))
            }
            continue
          }
          // A write of an earlier incarnation, which was deleted: refused as for a deleted record.
          results.append(write.isDelete ? .deleted : .refusedDeleted(c))
          continue
        }
        // A later incarnation replaces what is here, live or deleted: the device that made it
        // had seen this one deleted.
        if earlierCreators[key]?.contains(c.creatorDevice) != true { earlierCreators[key, default: []].append(c.creatorDevice) }
        current = nil
        laterIncarnation = true
        if write.isDelete {
          var tombstone = write.record
          _store(&tombstone, at: now)
          deletions.append((now, key, head))
          results.append(.deleted)
          changed = true
          continue
        }
      }
      if write.isDelete {
        guard let current, !current.isDeleted else {
          results.append(.deleted)
          continue
        }
        if let kept = policy.serverDelete(write, current: current, context: context) {
          results.append(.saved(kept))
          continue
        }
        var tombstone = current
        tombstone.deletedBy = write.record.deletedBy
        tombstone.deleteStamp = write.record.deleteStamp
        tombstone.versions = write.record.versions  // what the deleting device had seen
        _store(&tombstone, at: now)
        deletions.append((now, key, head))
        results.append(.deleted)
        changed = true
        continue
      }
      // What CloudKit does with a save of a record it does not have (an app's server: the
      // built-in engines' runs are as they were). One made from a fetched record carries a
      // change tag: `unknownItem` ("we tried to save a record with a locally-cached server
      // record, but that record no longer exists on the server", apple/sample-cloudkit-sync-engine,
      // SyncedDatabase.swift) — a tag of a record deleted since, or of another database
      // altogether. One without a tag is a new record, even under a deleted record's name: the
      // sample re-uploads after `unknownItem` by clearing its last known record, and CloudKit
      // keeps no tombstone that would refuse it.
      if appZones != nil, !write.isDelete, !laterIncarnation, current == nil || current!.isDeleted {
        if write.baseTag != 0 {
          results.append(.failed(.unknownItem, retryAfter: nil))
          continue
        }
        current = nil
      }
      switch policy.serverSave(write, current: current, context: context) {
      case .store(var record):
        if let current, record == current {
          results.append(.saved(current))  // the incoming write lost; nothing changes
        } else if let free = freeBytes, record.byteSize - (current?.byteSize ?? 0) > max(free, 0) {
          results.append(.failed(.quotaExceeded, retryAfter: nil))
        } else {
          _store(&record, at: now)
          results.append(.saved(record))
          changed = true
          if context.rules.hasParents { touchParent(of: record, before: current, rules: context.rules) }
        }
      case .conflict:
        results.append(current.map { .conflict(server: $0) } ?? .deleted)
      case .refuseDeleted:
        results.append(current.map { .refusedDeleted($0) } ?? .deleted)
      }
    }
    if let before, results.contains(where: \.isFailure) {
      self = before
      return (results.map { $0.isFailure ? $0 : .failed(.batchRequestFailed, retryAfter: nil) }, false, [])
    }
    return (results, changed, lostAnswers)
  }

  /// Bytes a request carries: every saved record's size (a delete carries only its name).
  static func requestBytes(_ writes: [RecordWrite]) -> Int64 {
    var n: Int64 = 0
    for w in writes { n += w.isDelete ? 100 : w.record.inlineByteSize }
    return n
  }

  /// Whether a request is over the byte limit (an upper bound first: most requests are far below).
  func overByteLimit(_ writes: [RecordWrite]) -> Bool {
    var bound: Int64 = 0
    for w in writes { bound += w.isDelete ? 100 : w.record.byteSizeUpperBound }
    return bound > conditions.maxBytesPerRequest && Self.requestBytes(writes) > conditions.maxBytesPerRequest
  }

  /// The log position of a record's latest change (0: none).
  func _position(of key: RecordKey) -> Int64 { Int(key) < positions.count ? positions[Int(key)] : 0 }

  mutating func _setPosition(_ key: RecordKey, _ position: Int64) {
    positions._grow(toHold: Int(key), with: 0)
    positions[Int(key)] = position
  }

  /// Saving a child under a parent — a record made with a parent reference, or one whose
  /// parent reference now names another record — moves the parent's change tag, and nothing is
  /// logged: no fetch reports it (sqlite-data #363: "saving a child record will cause iCloud to
  /// update the parent's recordChangeTag […] but that update does not get sent to the
  /// CKSyncEngine"; SyncKit #189: the parent's modification date moved when its first child
  /// was made, and the next save of the parent met `serverRecordChanged`). A device's next save
  /// of the parent based on the tag it knows is refused as changed. (A save of a child that
  /// leaves its parent reference as it was is not reported to move it, and does not here.)
  mutating func touchParent(of record: RecordState, before: RecordState?, rules: SchemaRules) {
    guard let f = rules.parentField[Int(record.type)], case .ref(let parent) = record.fields[Int(f)].value, parent != record.key,
      var p = records[parent], !p.isDeleted
    else { return }
    if let before, !before.isDeleted, before.fields[Int(f)].value == record.fields[Int(f)].value { return }
    p.changeTag = nextTag
    nextTag += 1
    records[parent] = p
  }

  mutating func _store(_ record: inout RecordState, at now: VirtualTime) {
    if appZones != nil, !record.isDeleted {
      // An app's record carries the server-set dates (`creationDate`, `modificationDate`) in its
      // stamp, which no app reads otherwise: created when the server first saved this record
      // (a record made again after a delete is new), modified now.
      let kept = records[record.key].flatMap {
        $0.isDeleted || $0.creator != record.creator || $0.stamp.device != Stamp.serverDates ? nil : $0.stamp.hlcWall
      }
      record.stamp = Stamp(clock: now.nanoseconds, hlcWall: kept ?? now.nanoseconds, hlcLogical: 0, device: Stamp.serverDates)
    }
    record.changeTag = nextTag
    nextTag += 1
    head += 1
    if tracksUsage { usedBytes += record.byteSize - (records[record.key]?.byteSize ?? 0) }
    records[record.key] = record
    _setPosition(record.key, head)
    log.append((head, record.key))
  }

  /// Handles a fetch since `token` (nil: everything). After a nil-token fetch, deletions are
  /// delivered only for records the fetching device created, as CloudKit does (of a record
  /// created again after a delete: any of its incarnations).
  package mutating func fetch(token: Int64?, from device: Int32, zone: Int32 = 0, at now: VirtualTime, retention: SimDuration) -> FetchReply {
    purge(now: now, retention: retention)
    if let wait = admit(device, at: now) { return .failed(.requestRateLimited, retryAfter: wait) }
    if let reason = deletionSince(zone) { return .zoneDeleted(reason, epoch: zoneEpoch) }
    if let token, token < purgedThrough { return .tokenExpired }
    let from = token ?? 0
    // First log entry after `from`.
    var lo = 0
    var hi = log.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if log[mid].position <= from { lo = mid + 1 } else { hi = mid }
    }
    var page: [RecordState] = []
    // (Room for the page made once: at most a page, at most what the log holds after `from`.)
    if lo < log.count { page.reserveCapacity(Swift.min(pageSize, log.count - lo)) }
    var last = from
    var i = lo
    while i < log.count, page.count < pageSize {
      let (pos, key) = log[i]
      i += 1
      last = pos
      guard _position(of: key) == pos, let record = records[key] else { continue }  // superseded or purged
      if token == nil, record.isDeleted, record.creatorDevice != device, earlierCreators.isEmpty || earlierCreators[key]?.contains(device) != true {
        continue
      }
      page.append(record)
    }
    let more = i < log.count
    return .changes(records: page, newToken: more ? last : head, moreComing: more)
  }

  /// Forgets deletions older than the retention window; tokens from before them expire.
  package mutating func purge(now: VirtualTime, retention: SimDuration) {
    while deletionsStart < deletions.count {
      let d = deletions[deletionsStart]
      guard d.time + retention <= now else { break }
      deletionsStart += 1
      if _position(of: d.key) == d.position, records[d.key]?.isDeleted == true {
        records[d.key] = nil
        _setPosition(d.key, 0)
        purgedThrough = max(purgedThrough, d.position)
      }
    }
    if deletionsStart > 1_024, deletionsStart * 2 > deletions.count {
      deletions.removeFirst(deletionsStart)
      deletionsStart = 0
    }
  }
}
