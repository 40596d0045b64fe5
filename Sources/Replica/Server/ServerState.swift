@_spi(Kernel) import Simulator

/// The CloudKit-like server: one zone of records with change tags, a change log addressed by
/// tokens, deletions kept for the retention window and then purged, and schema validation.
/// A pure state machine: requests in, replies out; merge decisions go through the policy.
package struct ServerState: Sendable {
  package let schema: Schema
  /// Per type: whether uploads are accepted (CloudKit-safe and deployed).
  let acceptsType: [Bool]
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
  var nextTag: Int64 = 1
  /// Records per fetch page.
  package var pageSize = 200

  package init(schema: Schema) {
    self.schema = schema
    acceptsType = schema.types.indices.map { schema.acceptsUploads(ofType: $0) }
  }

  /// The live records, in key order.
  package var liveRecords: [RecordState] {
    records.compactMap { $0.value.isDeleted ? nil : $0.value }
  }

  /// Handles a push. Returns the per-write results and whether anything changed.
  package mutating func push(_ writes: [RecordWrite], from device: Int32, at now: VirtualTime, policy: any SyncPolicy, context: MergeContext) -> (
    results: [WriteResult], changed: Bool
  ) {
    purge(now: now, retention: policy.settings.retention)
    var results: [WriteResult] = []
    results.reserveCapacity(writes.count)
    var changed = false
    for write in writes {
      let key = write.record.key
      let type = Int(write.record.type)
      guard acceptsType[type] else {
        results.append(.rejected(typeName: schema.types[type].name))
        continue
      }
      let current = records[key]
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
      switch policy.serverSave(write, current: current, context: context) {
      case .store(var record):
        if let current, record == current {
          results.append(.saved(current))  // the incoming write lost; nothing changes
        } else {
          _store(&record, at: now)
          results.append(.saved(record))
          changed = true
        }
      case .conflict:
        results.append(current.map { .conflict(server: $0) } ?? .deleted)
      case .refuseDeleted:
        results.append(current.map { .refusedDeleted($0) } ?? .deleted)
      }
    }
    return (results, changed)
  }

  /// The log position of a record's latest change (0: none).
  func _position(of key: RecordKey) -> Int64 { Int(key) < positions.count ? positions[Int(key)] : 0 }

  mutating func _setPosition(_ key: RecordKey, _ position: Int64) {
    positions._grow(toHold: Int(key), with: 0)
    positions[Int(key)] = position
  }

  mutating func _store(_ record: inout RecordState, at now: VirtualTime) {
    record.changeTag = nextTag
    nextTag += 1
    head += 1
    records[record.key] = record
    _setPosition(record.key, head)
    log.append((head, record.key))
  }

  /// Handles a fetch since `token` (nil: everything). After a nil-token fetch, deletions are
  /// delivered only for records the fetching device created, as CloudKit does.
  package mutating func fetch(token: Int64?, from device: Int32, at now: VirtualTime, retention: SimDuration) -> FetchReply {
    purge(now: now, retention: retention)
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
    var last = from
    var i = lo
    while i < log.count, page.count < pageSize {
      let (pos, key) = log[i]
      i += 1
      last = pos
      guard _position(of: key) == pos, let record = records[key] else { continue }  // superseded or purged
      if token == nil, record.isDeleted, record.creatorDevice != device { continue }
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
