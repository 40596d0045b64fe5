/// Values by record key, in a dense array indexed by the key (keys are the world's dense record
/// numbers): a lookup is an index, not a hash, and iteration is in key order with no sort.
/// Not generic on purpose: a generic table used from other modules was not specialized, and
/// every lookup went through the runtime's generic metadata.
///
///     var store = RecordTable()
///     store[3] = record
///     store[3]?.isDeleted          // false
///     for (key, r) in store { … }  // ascending keys
package struct RecordTable: Sequence {
  package typealias Stored = RecordState
  /// One slot per key (a record is one reference to its shared storage: a slot is 8 bytes).
  /// Presence is tested on the slot alone, without reading the record's storage.
  @usableFromInline var _slots: [Stored?] = []

  @inlinable package init() {}

  /// How many keys hold a value (counted: it is read once a run, written on every change).
  package var count: Int {
    var n = 0
    for k in _slots.indices where _slots[k] != nil { n += 1 }
    return n
  }

  /// Whether no key holds a value.
  package var isEmpty: Bool { count == 0 }

  @inlinable
  package subscript(key: RecordKey) -> Stored? {
    get { key >= 0 && Int(key) < _slots.count ? _slots[Int(key)] : nil }
    set {
      let k = Int(key)
      precondition(key >= 0, "RecordTable: a negative record key")
      if k >= _slots.count {
        guard newValue != nil else { return }
        _slots._grow(toHold: k - 1, with: nil)
        _slots.append(newValue)
        return
      }
      _slots[k] = newValue
    }
  }

  /// Whether the table holds `record` at its key, compared in place.
  @inlinable
  package func holds(_ record: Stored) -> Bool {
    guard record.key >= 0, Int(record.key) < _slots.count else { return false }
    guard let held = _slots[Int(record.key)] else { return false }
    return held == record
  }

  /// Whether `key` holds a record, live or deleted.
  @inlinable
  package func contains(_ key: RecordKey) -> Bool {
    key >= 0 && Int(key) < _slots.count && _slots[Int(key)] != nil
  }

  /// The type of the record at `key`, read in place; nil when there is none.
  @inlinable
  package func type(of key: RecordKey) -> Int32? {
    key >= 0 && Int(key) < _slots.count ? _slots[Int(key)]?.type : nil
  }

  /// The intent that created the record at `key`, read in place; nil when there is none.
  @inlinable
  package func creator(of key: RecordKey) -> IntentID? {
    key >= 0 && Int(key) < _slots.count ? _slots[Int(key)]?.creator : nil
  }

  /// The record `key`'s field `field` refers to, read in place; nil when the field holds no
  /// reference (or there is no record).
  @inlinable
  package func reference(_ key: RecordKey, field: Int) -> RecordKey? {
    guard key >= 0, Int(key) < _slots.count, case .ref(let target)? = _slots[Int(key)]?.fields[field].value else { return nil }
    return target
  }

  /// Makes room for keys below `count` (no regrowth, and no copies left behind by one, while
  /// they are filled).
  package mutating func reserve(keys count: Int) { _slots.reserveCapacity(count) }

  /// The highest key a value may be at, plus one.
  @inlinable package var capacity: Int { _slots.count }

  /// Whether `key` holds a live record (not a deletion), read in place.
  @inlinable
  package func isLive(_ key: RecordKey) -> Bool {
    guard key >= 0, Int(key) < _slots.count, let deletedBy = _slots[Int(key)]?.deletedBy else { return false }
    return deletedBy == 0
  }

  /// Whether `key` holds a deletion (a tombstone or hard-delete marker), read in place.
  @inlinable
  package func isDeleted(_ key: RecordKey) -> Bool {
    guard key >= 0, Int(key) < _slots.count, let deletedBy = _slots[Int(key)]?.deletedBy else { return false }
    return deletedBy != 0
  }

  /// The keys that hold a value, ascending.
  @inlinable
  package var keys: [RecordKey] {
    var out: [RecordKey] = []
    for k in _slots.indices where _slots[k] != nil { out.append(RecordKey(k)) }
    return out
  }

  /// The values in key order.
  @inlinable package var values: [Stored] { _slots.compactMap { $0 } }

  /// The record at `key` unless it is absent or deleted (read in place).
  @inlinable
  package func live(_ key: RecordKey) -> Stored? {
    self[key].flatMap { $0.isDeleted ? nil : $0 }
  }

  /// The values not deleted, in key order: made in one allocation (room for every slot), not
  /// grown an element at a time.
  package var liveValues: [Stored] {
    var out: [Stored] = []
    out.reserveCapacity(_slots.count)
    _slots.withUnsafeBufferPointer { slots in
      for k in slots.indices { if let v = slots[k], !v.isDeleted { out.append(v) } }
    }
    return out
  }

  /// Key-value pairs in ascending key order.
  @inlinable package func makeIterator() -> Iterator { Iterator(slots: _slots) }

  /// Walks the keys that hold a value, ascending.
  package struct Iterator: IteratorProtocol {
    @usableFromInline let slots: [Stored?]
    @usableFromInline var index = 0
    @inlinable init(slots: [Stored?]) { self.slots = slots }
    @inlinable
    package mutating func next() -> (key: RecordKey, value: Stored)? {
      while index < slots.count {
        let k = index
        index += 1
        if let v = slots[k] { return (RecordKey(k), v) }
      }
      return nil
    }
  }
}

extension Array {
  /// Grows the array with `filler` until `index` is valid. Appends one at a time: dense keys
  /// almost always grow by one, and `append(contentsOf: repeatElement(…))` goes through a slow
  /// generic path for that.
  @inlinable
  package mutating func _grow(toHold index: Int, with filler: Element) {
    while count <= index { append(filler) }
  }
}

extension RecordTable: Sendable {}
extension RecordTable.Iterator: Sendable {}
extension RecordTable: Equatable {
  /// Equal when the same keys hold equal values (trailing empty slots do not count).
  @inlinable
  package static func == (a: RecordTable, b: RecordTable) -> Bool {
    a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
  }
}

extension RecordTable {
  /// The live records here that refer to `key` through a field whose delete rule is `cascade`
  /// or `nullify`, in key order, with the field and the rule.
  package func referrers(of key: RecordKey, type: Int32, rules: SchemaRules) -> [(key: RecordKey, referrer: Referrer)] {
    guard rules.referrers[Int(type)].contains(where: { $0.rule != .deny }) else { return [] }
    let candidates = rules.referrers[Int(type)].filter { $0.rule != .deny }
    var out: [(key: RecordKey, referrer: Referrer)] = []
    // Read in place: a record is copied only when it refers to `key`.
    for k in 0..<capacity {
      let child = RecordKey(k)
      guard self.isLive(child), let childType = self.type(of: child) else { continue }
      for c in candidates where c.type == childType && self.reference(child, field: Int(c.field)) == key { out.append((child, c)) }
    }
    return out
  }
}
