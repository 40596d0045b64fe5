/// A set of record keys as one bit per key: keys are dense (a record's index in the world's
/// table), so membership is a shift and a mask, and adding a key never rehashes — where a
/// `Set<RecordKey>` built a key at a time resized as it grew, and hashed every key with SipHash.
/// For membership only: it is never iterated.
package struct KeyBits: Sendable, ExpressibleByArrayLiteral {
  @usableFromInline var words: [UInt64] = []
  /// How many keys are in the set.
  @usableFromInline var _count = 0

  /// The empty set.
  @inlinable package init() {}

  /// The set of these keys.
  package init(arrayLiteral keys: RecordKey...) {
    for k in keys { insert(k) }
  }

  /// Whether no key is in the set.
  @inlinable package var isEmpty: Bool { _count == 0 }

  /// Whether `key` is in the set (never a negative key).
  @inlinable
  package func contains(_ key: RecordKey) -> Bool {
    let w = Int(key) >> 6
    guard key >= 0, w < words.count else { return false }
    return words[w] & (1 << UInt64(key & 63)) != 0
  }

  /// Adds `key` (not negative).
  @inlinable
  package mutating func insert(_ key: RecordKey) {
    precondition(key >= 0, "KeyBits: a negative record key")
    let w = Int(key) >> 6
    while words.count <= w { words.append(0) }
    let bit: UInt64 = 1 << UInt64(key & 63)
    if words[w] & bit == 0 {
      words[w] |= bit
      _count += 1
    }
  }

  /// Removes `key` if it is in the set.
  @inlinable
  package mutating func remove(_ key: RecordKey) {
    let w = Int(key) >> 6
    guard key >= 0, w < words.count else { return }
    let bit: UInt64 = 1 << UInt64(key & 63)
    if words[w] & bit != 0 {
      words[w] &= ~bit
      _count -= 1
    }
  }
}

/// A map from record keys to values as one slot per key (keys are dense), in place of a
/// `[RecordKey: Value]` that hashed every key with SipHash and rehashed as it grew. For lookups
/// only: it is never iterated.
package struct KeyMap<Value: Sendable>: Sendable, ExpressibleByDictionaryLiteral {
  @usableFromInline var slots: [Value?] = []
  /// How many keys hold a value.
  @usableFromInline var _count = 0

  /// The empty map.
  @inlinable package init() {}

  /// The map of these pairs (the last value of a key repeated wins, as assignment would).
  package init(dictionaryLiteral pairs: (RecordKey, Value)...) {
    for (k, v) in pairs { self[k] = v }
  }

  /// Whether no key holds a value.
  @inlinable package var isEmpty: Bool { _count == 0 }

  /// The value of `key` (nil: none); setting nil removes it. Keys are not negative.
  @inlinable
  package subscript(key: RecordKey) -> Value? {
    get { key >= 0 && Int(key) < slots.count ? slots[Int(key)] : nil }
    set {
      precondition(key >= 0, "KeyMap: a negative record key")
      let k = Int(key)
      if k >= slots.count {
        guard newValue != nil else { return }
        while slots.count <= k { slots.append(nil) }
      }
      if slots[k] == nil, newValue != nil { _count += 1 } else if slots[k] != nil, newValue == nil { _count -= 1 }
      slots[k] = newValue
    }
  }
}
