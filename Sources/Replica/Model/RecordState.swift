/// A set of a record's fields, by index in its type (at most 64): which fields a save changed,
/// which have edits still pending.
///
///     let title = context.field("title", of: record)!
///     if write.changed.contains(field: title) { … }
///     var both: FieldMask = [.field(0), .field(1)]
///     both.formUnion(.field(2))
public struct FieldMask: OptionSet, Hashable, Sendable {
  /// Bit `i` is field `i`.
  public var rawValue: UInt64
  /// The set whose bits are `rawValue`.
  @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// The set of just field `index`.
  @inlinable public static func field(_ index: Int) -> FieldMask { FieldMask(rawValue: 1 << UInt64(index)) }

  /// Every field (of any type).
  public static let all = FieldMask(rawValue: .max)

  /// The first `count` fields: all of a type with `count` fields.
  @inlinable public static func first(_ count: Int) -> FieldMask {
    count <= 0 ? [] : FieldMask(rawValue: .max >> UInt64(64 - min(count, 64)))
  }

  /// Whether field `index` is in the set.
  @inlinable public func contains(field index: Int) -> Bool { rawValue & (1 << UInt64(index)) != 0 }

  /// The fields in the set among the first `count`, in order.
  public func fields(below count: Int) -> [Int] { (0..<min(count, 64)).filter { contains(field: $0) } }
}

/// One stored field value with its provenance (the intent that wrote it; 0 = the schema default)
/// and the policy's stamp.
public struct FieldValue: Hashable, Sendable {
  /// The stored value: `.null` when the field is absent, text with the intent of every character.
  public var value: Value
  /// The intent that wrote the value; 0 when it is the schema default.
  public var writer: IntentID
  /// The policy's stamp of the write (``Stamp/origin`` for the schema default).
  public var stamp: Stamp

  /// A field value written by `writer` and stamped `stamp`.
  @inlinable
  public init(value: Value, writer: IntentID, stamp: Stamp) {
    self.value = value
    self.writer = writer
    self.stamp = stamp
  }
}

/// A record as a device or the server holds it: fields with provenance, the creating intent, a
/// deletion marker, and the server's change tag for the version it is based on.
public struct RecordState: Hashable, Sendable {
  /// The record's key: its index in the world's record table, the same on every device.
  public var key: RecordKey
  /// The record's type, as an index into ``Schema/types``.
  public var type: Int32
  /// The intent that created the record.
  public var creator: IntentID
  /// The device that created it (CloudKit delivers deletions after a nil-token refetch only
  /// for records the fetching device created).
  public var creatorDevice: Int32
  /// One value per field of the type, in schema order.
  public var fields: [FieldValue]
  /// The newest stamp of any write (the conflict unit of record-level policies).
  public var stamp: Stamp
  /// The delete intent, or 0 while the record is live.
  public var deletedBy: IntentID
  /// The policy's stamp of the delete; ``Stamp/origin`` while the record is live.
  public var deleteStamp: Stamp
  /// The server version this copy is based on (0: never on the server).
  public var changeTag: Int64
  /// The writes this copy has incorporated, per device (policy metadata).
  public var versions: VersionVector

  /// A live copy with the given fields: not deleted, never on the server (change tag 0) and with
  /// an empty version vector.
  public init(key: RecordKey, type: Int32, creator: IntentID, creatorDevice: Int32, fields: [FieldValue], stamp: Stamp) {
    self.key = key
    self.type = type
    self.creator = creator
    self.creatorDevice = creatorDevice
    self.fields = fields
    self.stamp = stamp
    self.deletedBy = 0
    self.deleteStamp = .origin
    self.changeTag = 0
    self.versions = VersionVector()
  }

  /// Whether this copy is a deletion (a tombstone, or a hard-delete marker): ``deletedBy`` is not 0.
  @inlinable public var isDeleted: Bool { deletedBy != 0 }

  /// Whether this copy had taken in the write stamped `stamp` — it is in the copy's version
  /// vector — so a later change to the copy was made knowing it. Reads ``versions``: a policy
  /// that calls it returns `true` from `tracksVersions`.
  public func hasSeen(_ stamp: Stamp) -> Bool {
    guard stamp.device >= 0 else { return true }  // the schema's default: always known
    return versions[stamp.device] >= VersionVector.Entry(wall: stamp.hlcWall, logical: stamp.hlcLogical)
  }

  /// Whether this copy had taken in `value`'s write.
  public func hasSeen(_ value: FieldValue) -> Bool { hasSeen(value.stamp) }

  /// Whether neither copy had seen the other's write of field `index`: a real conflict, not one
  /// write made after the other.
  public func isConcurrent(with other: RecordState, in index: Int) -> Bool {
    !hasSeen(other.fields[index]) && !other.hasSeen(fields[index])
  }

  /// Every intent whose effect this copy carries: the creator, every field writer, every text
  /// character's inserter and remover, and the delete. Receiving the copy means having seen them.
  package func forEachProvenance(_ body: (IntentID) -> Void) {
    body(creator)
    if deletedBy != 0 { body(deletedBy) }
    forEachProvenance(ofFields: .all, body)
  }

  /// The intents whose effect the fields in `mask` carry: their writers and, for text, every
  /// character's inserter and remover.
  package func forEachProvenance(ofFields mask: FieldMask, _ body: (IntentID) -> Void) {
    for (i, f) in fields.enumerated() where mask.contains(field: i) {
      if f.writer != 0 { body(f.writer) }
      if case .text(let t) = f.value {
        var last: IntentID = 0
        for a in t.atoms {
          if a.id.intent != last, a.id.intent != 0 {
            body(a.id.intent)
            last = a.id.intent
          }
          if a.deletedBy != 0 { body(a.deletedBy) }
        }
      }
    }
  }
}
