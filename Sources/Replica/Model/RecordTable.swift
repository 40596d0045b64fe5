/// Values by record key, in a dense array indexed by the key (keys are the world's dense record
/// numbers): a lookup is an index, not a hash, and iteration is in key order with no sort.
///
///     var store = RecordTable<RecordState>()
///     store[3] = record
///     store[3]?.isDeleted          // false
///     for (key, r) in store { … }  // ascending keys
package struct RecordTable<Stored>: Sequence {
  @usableFromInline var _slots: [Stored?] = []
  /// How many keys hold a value.
  package private(set) var count = 0

  package init() {}

  /// Whether no key holds a value.
  @inlinable package var isEmpty: Bool { count == 0 }

  @inlinable
  package subscript(key: RecordKey) -> Stored? {
    get { key >= 0 && Int(key) < _slots.count ? _slots[Int(key)] : nil }
    set {
      let k = Int(key)
      precondition(key >= 0, "RecordTable: a negative record key")
      if k >= _slots.count {
        guard newValue != nil else { return }
        _slots.append(contentsOf: repeatElement(nil, count: k + 1 - _slots.count))
      }
      let had = _slots[k] != nil
      _slots[k] = newValue
      count += (newValue != nil ? 1 : 0) - (had ? 1 : 0)
    }
  }

  /// The keys that hold a value, ascending.
  package var keys: [RecordKey] { _slots.indices.compactMap { _slots[$0] == nil ? nil : RecordKey($0) } }

  /// The values in key order.
  package var values: [Stored] { _slots.compactMap { $0 } }

  /// Key-value pairs in ascending key order.
  package func makeIterator() -> Iterator { Iterator(slots: _slots) }

  package struct Iterator: IteratorProtocol {
    let slots: [Stored?]
    var index = 0
    package mutating func next() -> (key: RecordKey, value: Stored)? {
      while index < slots.count {
        defer { index += 1 }
        if let v = slots[index] { return (RecordKey(index), v) }
      }
      return nil
    }
  }
}

extension RecordTable: Sendable where Stored: Sendable {}
extension RecordTable: Equatable where Stored: Equatable {
  /// Equal when the same keys hold equal values (trailing empty slots do not count).
  package static func == (a: RecordTable, b: RecordTable) -> Bool {
    a.count == b.count && a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
  }
}
