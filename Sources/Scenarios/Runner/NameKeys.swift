import Replica

/// Record names to keys, for compiling a scenario: an open-addressing table hashed with FNV-1a
/// over the name's UTF-8, where a `[String: RecordKey]` hashed every short name with SipHash
/// (about 300 instructions a lookup; a fuzz seed's plan looks up a hundred names).
///
/// It answers exactly as a `[String: RecordKey]` would. Names are compared as Swift compares
/// strings (canonical equivalence), which hashing bytes cannot follow outside ASCII: two ASCII
/// strings are equal exactly when their bytes are, so the table hashes bytes while every name is
/// ASCII (a parsed scenario's always are) and becomes a dictionary for good when a name that is
/// not ASCII is added (a file built in Swift may hold one). Nothing here is iterated, and nothing
/// reaches a trace, report or hash.
package struct NameKeys {
  /// Per slot: 1 + the index into the entries, or 0 for an empty slot.
  private var slots: [Int32]
  private var names: [String] = []
  private var hashes: [UInt64] = []
  private var values: [RecordKey] = []
  /// Every name, once one that is not ASCII was added (the byte-hashed table is then unused).
  private var dictionary: [String: RecordKey]?

  /// An empty table with room for `capacity` names before it grows.
  package init(capacity: Int = 8) {
    var size = 16
    while size < 2 * capacity { size *= 2 }
    slots = Array(repeating: 0, count: size)
    names.reserveCapacity(capacity)
    hashes.reserveCapacity(capacity)
    values.reserveCapacity(capacity)
  }

  /// The key of `name`, if it has one.
  package subscript(name: String) -> RecordKey? {
    if let dictionary { return dictionary[name] }
    guard let h = Self.asciiHash(name) else {
      // Not ASCII, against ASCII names only: rare, so compared one by one as strings.
      return names.firstIndex(of: name).map { values[$0] }
    }
    let mask = slots.count - 1
    var i = Int(truncatingIfNeeded: h) & mask
    while true {
      let s = Int(slots[i])
      if s == 0 { return nil }
      if hashes[s - 1] == h, names[s - 1] == name { return values[s - 1] }
      i = (i + 1) & mask
    }
  }

  /// Gives `name` the key `key` unless it has one; says whether it did.
  @discardableResult
  package mutating func insertIfAbsent(_ name: String, _ key: RecordKey) -> Bool {
    if dictionary != nil { return Self.fill(&dictionary![name], with: key) }
    guard let h = Self.asciiHash(name) else {
      var all: [String: RecordKey] = [:]
      for (n, v) in zip(names, values) { all[n] = v }
      let added = Self.fill(&all[name], with: key)
      dictionary = all
      return added
    }
    if 2 * (names.count + 1) > slots.count { grow() }
    let mask = slots.count - 1
    var i = Int(truncatingIfNeeded: h) & mask
    while true {
      let s = Int(slots[i])
      if s == 0 { break }
      if hashes[s - 1] == h, names[s - 1] == name { return false }
      i = (i + 1) & mask
    }
    names.append(name)
    hashes.append(h)
    values.append(key)
    slots[i] = Int32(names.count)
    return true
  }

  @inline(__always)
  private static func fill(_ slot: inout RecordKey?, with key: RecordKey) -> Bool {
    guard slot == nil else { return false }
    slot = key
    return true
  }

  private mutating func grow() {
    var size = slots.count * 2
    while size < 2 * (names.count + 1) { size *= 2 }
    slots = Array(repeating: 0, count: size)
    let mask = size - 1
    for e in hashes.indices {
      var i = Int(truncatingIfNeeded: hashes[e]) & mask
      while slots[i] != 0 { i = (i + 1) & mask }
      slots[i] = Int32(e + 1)
    }
  }

  /// FNV-1a over the UTF-8 bytes, mixed so that the low bits (the slot) depend on every byte;
  /// nil when a byte is not ASCII.
  static func asciiHash(_ name: String) -> UInt64? {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    var seen: UInt8 = 0
    let read: Void? = name.utf8.withContiguousStorageIfAvailable { bytes in
      for b in bytes {
        seen |= b
        h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
      }
    }
    if read == nil {
      for b in name.utf8 {
        seen |= b
        h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
      }
    }
    return seen & 0x80 == 0 ? h ^ (h &>> 29) : nil
  }
}
