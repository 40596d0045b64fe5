import Replica

/// One anomaly found by the reference checker: what kind, on which record, in which field.
///
/// The same verdict can occur more than once in ``ReferenceOracle/judge(_:)``'s result (two lost
/// edits of one field are two `lost-edit` verdicts on the same record and field): the result is a
/// sorted multiset. Deduplicate with `Set` if only the kinds of trouble matter.
public struct ReferenceVerdict: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The anomaly, in kebab-case: one of ``ReferenceVerdict/allKinds``.
  public var kind: String
  /// The record it concerns, or nil (a run that did not settle).
  public var record: RecordKey?
  /// The field index (in the record type's schema order) it concerns, or nil (a whole record).
  public var field: Int?

  /// A verdict of `kind` on `record` (and `field`, if any).
  public init(kind: String, record: RecordKey? = nil, field: Int? = nil) {
    self.kind = kind
    self.record = record
    self.field = field
  }

  /// Ordered by record (none first), then field (none first), then kind: the verdicts of one
  /// record sit together.
  public static func < (a: ReferenceVerdict, b: ReferenceVerdict) -> Bool {
    let ka = (a.record == nil ? 0 : 1, Int64(a.record ?? 0), a.field == nil ? 0 : 1, a.field ?? 0)
    let kb = (b.record == nil ? 0 : 1, Int64(b.record ?? 0), b.field == nil ? 0 : 1, b.field ?? 0)
    if ka != kb { return ka < kb }
    return a.kind < b.kind
  }

  /// `lost-edit r3.f1`, `resurrection r0`, `divergence`.
  public var description: String {
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
  public static let lostEdit = "lost-edit"
  /// An edit beaten by a write that had not seen it although nothing was concurrent with it.
  public static let staleOverwrite = "stale-overwrite"
  /// A record deleted after every update to it had been seen, visible again somewhere.
  public static let resurrection = "resurrection"
  /// An append-only record (never deleted) missing on some device or on the server.
  public static let droppedEvent = "dropped-event"
  /// A text character shown twice.
  public static let duplicateEvent = "duplicate-event"
  /// A record that never reached the server although it is still on its creator's device.
  public static let strandedRecord = "stranded-record"
  /// A device disagreeing with the server after settle, or a run that did not settle.
  public static let divergence = "divergence"
  /// A final value no effective intent wrote.
  public static let phantomValue = "phantom-value"
  /// Concurrent writes to a mutable field, one of them overwritten (informational).
  public static let concurrentOverwrite = "concurrent-overwrite"
  /// A delete concurrent with an update of the same record (informational).
  public static let deleteUpdateConflict = "delete-update-conflict"

  /// Every kind the reference checker reports, in alphabetical order.
  public static let allKinds: [String] = [
    concurrentOverwrite, deleteUpdateConflict, divergence, droppedEvent, duplicateEvent, lostEdit,
    phantomValue, resurrection, staleOverwrite, strandedRecord,
  ]
}
