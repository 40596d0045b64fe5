import Replica

/// One anomaly found by the reference checker: what kind, on which record, in which field.
///
/// The same verdict can occur more than once in ``ReferenceOracle/judge(_:)``'s result (two lost
/// edits of one field are two `lost-edit` verdicts on the same record and field): the result is a
/// sorted multiset. Deduplicate with `Set` if only the kinds of trouble matter.
package struct ReferenceVerdict: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The anomaly, in kebab-case: one of ``ReferenceVerdict/allKinds``.
  package var kind: String
  /// The record it concerns, or nil (a run that did not settle).
  package var record: RecordKey?
  /// The field index (in the record type's schema order) it concerns, or nil (a whole record).
  package var field: Int?

  /// A verdict of `kind` on `record` (and `field`, if any).
  package init(kind: String, record: RecordKey? = nil, field: Int? = nil) {
    self.kind = kind
    self.record = record
    self.field = field
  }

  /// Ordered by record (none first), then field (none first), then kind: the verdicts of one
  /// record sit together.
  package static func < (a: ReferenceVerdict, b: ReferenceVerdict) -> Bool {
    let ka = (a.record == nil ? 0 : 1, Int64(a.record ?? 0), a.field == nil ? 0 : 1, a.field ?? 0)
    let kb = (b.record == nil ? 0 : 1, Int64(b.record ?? 0), b.field == nil ? 0 : 1, b.field ?? 0)
    if ka != kb { return ka < kb }
    return a.kind < b.kind
  }

  /// `lost-edit r3.f1`, `resurrection r0`, `divergence`.
  package var description: String {
    var s = kind
    if let record {
      s += " r\(record)"
      if let field { s += ".f\(field)" }
    } else if let field {
      s += " f\(field)"
    }
    return s
  }

  // MARK: Kinds

  /// An edit that is gone from the final state and was not superseded by anything its writer
  /// could know about (never sent, or beaten by a concurrent write).
  package static let lostEdit = "lost-edit"
  /// An edit beaten by a write that had not seen it although nothing was concurrent with it.
  package static let staleOverwrite = "stale-overwrite"
  /// A record deleted after every update to it had been seen, visible again somewhere.
  package static let resurrection = "resurrection"
  /// An append-only record (never deleted) missing on some device or on the server.
  package static let droppedEvent = "dropped-event"
  /// A text character shown twice.
  package static let duplicateEvent = "duplicate-event"
  /// A record that never reached the server although it is still on its creator's device.
  package static let strandedRecord = "stranded-record"
  /// A device disagreeing with the server after settle, or a run that did not settle.
  package static let divergence = "divergence"
  /// A final value no effective intent wrote.
  package static let phantomValue = "phantom-value"
  /// A device that after settle still holds unsent changes or waits out a CloudKit error.
  package static let stalledSync = "stalled-sync"
  /// A live record referring to a record that no device and no server holds.
  package static let danglingReference = "dangling-reference"
  /// Two live records of a singleton or unique-by type sharing their key.
  package static let logicalDuplicate = "logical-duplicate"
  /// A device showing a record whose asset's file is not on that device.
  package static let missingAsset = "missing-asset"
  /// Concurrent writes to a mutable field, one of them overwritten (informational).
  package static let concurrentOverwrite = "concurrent-overwrite"
  /// A delete concurrent with an update of the same record (informational).
  package static let deleteUpdateConflict = "delete-update-conflict"
  /// A device shows another account's records its account may not see after settle.
  package static let accessLeak = "access-leak"

  /// Every kind the reference checker reports, in alphabetical order.
  package static let allKinds: [String] = [
    accessLeak, concurrentOverwrite, danglingReference, deleteUpdateConflict, divergence, droppedEvent, duplicateEvent, logicalDuplicate, lostEdit,
    missingAsset, phantomValue, resurrection, stalledSync, staleOverwrite, strandedRecord,
  ]
}
