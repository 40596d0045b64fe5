/// The trace's fingerprint: a 64-bit hash fed whole 64-bit words, the same in every process and
/// on every machine (Swift's `Hasher` is seeded per process).
///
/// Each word is xored in, multiplied by an odd constant and folded (`h ^= h >> 29`): both steps
/// are bijections, so no word is ever lost in the state. Strings are fed eight bytes at a time
/// and then their length, so `("ab", "c")` and `("a", "bc")` hash differently. Feeding words
/// instead of bytes makes hashing a trace record a handful of multiplications.
///
///     var h = TraceHasher()
///     h.combine(42 as UInt64)
///     h.combine("phone")
///     print(h.hexDigest)   // 16 lowercase hex digits
///
/// (``StableHasher``, byte-wise FNV-1a, stays what names random streams: changing it would
/// change every draw.)
@frozen
@_spi(Kernel) public struct TraceHasher: Sendable, Hashable {
  @usableFromInline var state: UInt64

  /// A hasher in its fixed initial state, the same in every process.
  @inlinable
  public init() { state = 0x243f_6a88_85a3_08d3 }

  /// The hash of everything combined so far.
  @inlinable
  public var value: UInt64 { state }

  /// The hash as 16 lowercase hex digits.
  public var hexDigest: String {
    let hex = String(state, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// Feeds one 64-bit word.
  @inlinable
  public mutating func combine(_ word: UInt64) {
    var s = (state ^ word) &* 0x9e37_79b9_7f4a_7c15
    s ^= s &>> 29
    state = s
  }

  /// Feeds `value`'s bit pattern as one word.
  @inlinable
  public mutating func combine(_ value: Int64) { combine(UInt64(bitPattern: value)) }

  /// Feeds `value` as one 64-bit word.
  @inlinable
  public mutating func combine(_ value: Int) { combine(UInt64(bitPattern: Int64(value))) }

  /// Feeds `value`'s 32-bit pattern, zero-extended, as one word.
  @inlinable
  public mutating func combine(_ value: Int32) { combine(UInt64(UInt32(bitPattern: value))) }

  /// Feeds `true` as the word 1 and `false` as the word 2.
  @inlinable
  public mutating func combine(_ value: Bool) { combine(value ? 1 as UInt64 : 2) }

  /// Feeds the string's UTF-8 bytes eight at a time (little-endian, the last word zero-padded),
  /// then its length in bytes with the top bit set.
  public mutating func combine(_ string: String) {
    // (Read from the contiguous UTF-8 in place, a word at a time: the same words as a byte
    // loop, several times faster. A native string is contiguous, small ones included: read
    // without a mutable copy of the string, which retained and released it on every call.)
    if string.utf8.withContiguousStorageIfAvailable({ combineUTF8(UnsafeRawBufferPointer($0)) }) != nil { return }
    var string = string
    string.withUTF8 { combineUTF8(UnsafeRawBufferPointer($0)) }
  }

  /// Feeds UTF-8 bytes eight at a time (little-endian, the last word zero-padded), then their
  /// count with the top bit set.
  mutating func combineUTF8(_ raw: UnsafeRawBufferPointer) {
    var i = 0
    while i + 8 <= raw.count {
      combine(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
      i += 8
    }
    if i < raw.count {
      var word: UInt64 = 0
      var shift: UInt64 = 0
      while i < raw.count {
        word |= UInt64(raw[i]) &<< shift
        shift += 8
        i += 1
      }
      combine(word)
    }
    combine(UInt64(raw.count) | 0x8000_0000_0000_0000)
  }
}
