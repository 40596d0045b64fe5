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
///
/// A value type with copy-on-write storage: a copy is one reference (8 bytes, one retain), so a
/// record held by the server, by messages in flight and by every device that took it in is one
/// shared version until someone changes their copy — which then gets storage of its own, as any
/// Swift value would.
public struct RecordState: Hashable, Sendable {
  /// The stored properties, shared between copies until one is changed. Exclusivity is not
  /// checked at run time (the checks cost more than sharing saves): the storage is only changed
  /// through a copy that holds its sole reference.
  @usableFromInline final class Storage: @unchecked Sendable {
    // (Declared in the order the hot paths read them, the most read nearest the object's
    // header: a record's key, type, creator and deletion, its fields and its stamp share the
    // header's cache line or the next.)
    @exclusivity(unchecked) @usableFromInline var key: RecordKey
    @exclusivity(unchecked) @usableFromInline var type: Int32
    @exclusivity(unchecked) @usableFromInline var creator: IntentID
    @exclusivity(unchecked) @usableFromInline var creatorDevice: Int32
    @exclusivity(unchecked) @usableFromInline var deletedBy: IntentID
    @exclusivity(unchecked) @usableFromInline var fields: [FieldValue]
    @exclusivity(unchecked) @usableFromInline var stamp: Stamp
    @exclusivity(unchecked) @usableFromInline var changeTag: Int64
    @exclusivity(unchecked) @usableFromInline var versions: VersionVector
    @exclusivity(unchecked) @usableFromInline var deleteStamp: Stamp

    @inlinable
    init(
      key: RecordKey, type: Int32, creator: IntentID, creatorDevice: Int32, fields: [FieldValue], stamp: Stamp, deletedBy: IntentID,
      deleteStamp: Stamp, changeTag: Int64, versions: VersionVector
    ) {
      self.key = key
      self.type = type
      self.creator = creator
      self.creatorDevice = creatorDevice
      self.fields = fields
      self.stamp = stamp
      self.deletedBy = deletedBy
      self.deleteStamp = deleteStamp
      self.changeTag = changeTag
      self.versions = versions
    }

    @inlinable
    func copy() -> Storage {
      Storage(
        key: key, type: type, creator: creator, creatorDevice: creatorDevice, fields: fields, stamp: stamp, deletedBy: deletedBy,
        deleteStamp: deleteStamp, changeTag: changeTag, versions: versions)
    }
  }

  @usableFromInline var _s: Storage

  /// Gives this copy storage of its own before it is changed (every property is changed
  /// through a `_modify` that calls it first, as ``Intent``'s are).
  @inlinable
  mutating func _makeUnique() {
    if !isKnownUniquelyReferenced(&_s) { _s = _s.copy() }
  }

  /// The record's key: its index in the world's record table, the same on every device.
  @inlinable public var key: RecordKey {
    get { _s.key }
    _modify {
      _makeUnique()
      yield &_s.key
    }
  }
  /// The record's type, as an index into ``Schema/types``.
  @inlinable public var type: Int32 {
    get { _s.type }
    _modify {
      _makeUnique()
      yield &_s.type
    }
  }
  /// The intent that created the record.
  @inlinable public var creator: IntentID {
    get { _s.creator }
    _modify {
      _makeUnique()
      yield &_s.creator
    }
  }
  /// The device that created it (CloudKit delivers deletions after a nil-token refetch only
  /// for records the fetching device created).
  @inlinable public var creatorDevice: Int32 {
    get { _s.creatorDevice }
    _modify {
      _makeUnique()
      yield &_s.creatorDevice
    }
  }
  /// One value per field of the type, in schema order.
  @inlinable public var fields: [FieldValue] {
    get { _s.fields }
    _modify {
      _makeUnique()
      yield &_s.fields
    }
  }
  /// The newest stamp of any write (the conflict unit of record-level policies).
  @inlinable public var stamp: Stamp {
    get { _s.stamp }
    _modify {
      _makeUnique()
      yield &_s.stamp
    }
  }
  /// The delete intent, or 0 while the record is live.
  @inlinable public var deletedBy: IntentID {
    get { _s.deletedBy }
    _modify {
      _makeUnique()
      yield &_s.deletedBy
    }
  }
  /// The policy's stamp of the delete; ``Stamp/origin`` while the record is live.
  @inlinable public var deleteStamp: Stamp {
    get { _s.deleteStamp }
    _modify {
      _makeUnique()
      yield &_s.deleteStamp
    }
  }
  /// The server version this copy is based on (0: never on the server).
  @inlinable public var changeTag: Int64 {
    get { _s.changeTag }
    _modify {
      _makeUnique()
      yield &_s.changeTag
    }
  }
  /// The writes this copy has incorporated, per device (policy metadata).
  @inlinable public var versions: VersionVector {
    get { _s.versions }
    _modify {
      _makeUnique()
      yield &_s.versions
    }
  }

  /// A live copy with the given fields: not deleted, never on the server (change tag 0) and with
  /// an empty version vector.
  @inlinable
  public init(key: RecordKey, type: Int32, creator: IntentID, creatorDevice: Int32, fields: [FieldValue], stamp: Stamp) {
    _s = Storage(
      key: key, type: type, creator: creator, creatorDevice: creatorDevice, fields: fields, stamp: stamp, deletedBy: 0,
      deleteStamp: .origin, changeTag: 0, versions: VersionVector())
  }

  /// Whether the two copies are the same version, property by property (two copies that share
  /// storage are equal without reading it).
  @inlinable
  public static func == (a: RecordState, b: RecordState) -> Bool {
    if a._s === b._s { return true }
    let x = a._s
    let y = b._s
    return x.key == y.key && x.type == y.type && x.creator == y.creator && x.creatorDevice == y.creatorDevice
      && x.fields == y.fields && x.stamp == y.stamp && x.deletedBy == y.deletedBy && x.deleteStamp == y.deleteStamp
      && x.changeTag == y.changeTag && x.versions == y.versions
  }

  /// Hashes every property, in declaration order.
  public func hash(into hasher: inout Hasher) {
    let x = _s
    hasher.combine(x.key)
    hasher.combine(x.type)
    hasher.combine(x.creator)
    hasher.combine(x.creatorDevice)
    hasher.combine(x.fields)
    hasher.combine(x.stamp)
    hasher.combine(x.deletedBy)
    hasher.combine(x.deleteStamp)
    hasher.combine(x.changeTag)
    hasher.combine(x.versions)
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
    // (Read in place: a copy of a field would retain and release its value.)
    _s.fields.withUnsafeBufferPointer { fields in
      for i in fields.indices where mask.contains(field: i) {
        if fields[i].writer != 0 { body(fields[i].writer) }
        if case .text(let t) = fields[i].value {
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
}
