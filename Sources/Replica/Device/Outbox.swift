/// One pending change: a save of some fields, or a delete.
package struct OutboxEntry: Hashable, Sendable {
  package var key: RecordKey
  package var isDelete: Bool
  package var changed: FieldMask
  /// Bumped on every change to the entry, so an acknowledgement for an older version does not
  /// clear a newer change.
  package var generation: UInt32
  /// Rejected by the server for good (an unsafe or undeployed type): kept, never resent.
  package var failed: Bool
  /// The server said it does not have the record (`unknownItem`): the next save carries every
  /// field, although only ``changed`` are the device's own changes. A fetched version of the
  /// record ends it (the server has the record after all).
  package var reupload = false

  /// The fields a save of this entry sends.
  package var sent: FieldMask { reupload ? .all : changed }
}

/// Pending changes in the order they were made, collapsed per record as CKSyncEngine does:
/// save then delete → delete; delete then save → save.
package struct Outbox: Hashable, Sendable {
  package private(set) var entries: [OutboxEntry] = []
  var nextGeneration: UInt32 = 1

  package init() {}

  package var isEmpty: Bool { entries.isEmpty }
  /// Whether anything is waiting to be sent (failed entries are not).
  package var hasSendable: Bool { entries.contains { !$0.failed } }

  package func entry(for key: RecordKey) -> OutboxEntry? { entries.first { $0.key == key } }

  mutating func _next() -> UInt32 {
    defer { nextGeneration &+= 1 }
    return nextGeneration
  }

  package mutating func save(_ key: RecordKey, fields: FieldMask) {
    let g = _next()
    if let i = entries.firstIndex(where: { $0.key == key }) {
      if entries[i].isDelete {
        entries[i].isDelete = false
        entries[i].changed = fields
      } else {
        entries[i].changed.formUnion(fields)
      }
      entries[i].generation = g
    } else {
      entries.append(OutboxEntry(key: key, isDelete: false, changed: fields, generation: g, failed: false))
    }
  }

  package mutating func delete(_ key: RecordKey) {
    let g = _next()
    if let i = entries.firstIndex(where: { $0.key == key }) {
      entries[i].isDelete = true
      entries[i].changed = []
      entries[i].reupload = false
      entries[i].generation = g
    } else {
      entries.append(OutboxEntry(key: key, isDelete: true, changed: [], generation: g, failed: false))
    }
  }

  /// Removes the entry for `key` if it is still at `generation` (or at any generation if nil).
  @discardableResult
  package mutating func remove(_ key: RecordKey, ifAt generation: UInt32? = nil) -> Bool {
    guard let i = entries.firstIndex(where: { $0.key == key }) else { return false }
    if let generation, entries[i].generation != generation { return false }
    entries.remove(at: i)
    return true
  }

  package mutating func markFailed(_ key: RecordKey) {
    if let i = entries.firstIndex(where: { $0.key == key }) { entries[i].failed = true }
  }

  /// Marks every field of the entry changed (after a conflict merge, or to upload the whole
  /// record again as new).
  mutating func markAllChanged(_ key: RecordKey) {
    if let i = entries.firstIndex(where: { $0.key == key }), !entries[i].isDelete {
      entries[i].changed = .all
      entries[i].generation = _next()
    }
  }

  /// Takes `fields` out of a pending save's changed fields (they hold what the server has).
  mutating func leaveUnchanged(_ key: RecordKey, _ fields: FieldMask) {
    if let i = entries.firstIndex(where: { $0.key == key }), !entries[i].isDelete { entries[i].changed.subtract(fields) }
  }

  /// Marks a pending save to carry every field (``OutboxEntry/reupload``).
  mutating func markReupload(_ key: RecordKey) {
    if let i = entries.firstIndex(where: { $0.key == key }), !entries[i].isDelete {
      entries[i].reupload = true
      entries[i].generation = _next()
    }
  }

  /// Ends ``OutboxEntry/reupload`` for `key` (the same pending change, so the same generation).
  mutating func clearReupload(_ key: RecordKey) {
    if let i = entries.firstIndex(where: { $0.key == key }) { entries[i].reupload = false }
  }

  /// The first `limit` entries that can be sent.
  package func sendable(limit: Int) -> [OutboxEntry] {
    var result: [OutboxEntry] = []
    result.reserveCapacity(Swift.max(0, Swift.min(limit, entries.count)))
    for e in entries where !e.failed {
      result.append(e)
      if result.count == limit { break }
    }
    return result
  }

  package mutating func removeAll() -> [OutboxEntry] {
    defer { entries.removeAll() }
    return entries
  }
}
