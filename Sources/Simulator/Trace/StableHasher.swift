/// A 64-bit FNV-1a hash over a canonical byte encoding, implemented here so that it is the same
/// in every process and on every machine (Swift's `Hasher` is seeded per process).
///
/// Integers are fed as 8 little-endian bytes, strings as their UTF-8 bytes followed by their
/// length, so `("ab", "c")` and `("a", "bc")` hash differently.
///
///     var h = StableHasher()
///     h.combine(42 as UInt64)
///     h.combine("phone")
///     print(h.hexDigest)   // 16 lowercase hex digits
@frozen
@_spi(Kernel) public struct StableHasher: Sendable, Hashable {
  /// FNV-1a's 64-bit offset basis: the state of a fresh hasher.
  public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
  /// FNV-1a's 64-bit prime, multiplied in after every byte.
  public static let prime: UInt64 = 0x0000_0100_0000_01b3

  @usableFromInline var state: UInt64

  /// A hasher at the offset basis, the same in every process.
  @inlinable
  public init() { state = Self.offsetBasis }

  /// The hash of everything combined so far.
  @inlinable
  public var value: UInt64 { state }

  /// The hash as 16 lowercase hex digits.
  public var hexDigest: String {
    let hex = String(state, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// Feeds one byte.
  @inlinable
  public mutating func combine(byte: UInt8) {
    state = (state ^ UInt64(byte)) &* Self.prime
  }

  /// Feeds `value` as 8 little-endian bytes.
  @inlinable
  public mutating func combine(_ value: UInt64) {
    var v = value
    // Eight rounds, unrolled by the optimizer; little-endian byte order on every platform.
    for _ in 0..<8 {
      state = (state ^ (v & 0xff)) &* Self.prime
      v >>= 8
    }
  }

  /// Feeds `value`'s bit pattern as 8 little-endian bytes.
  @inlinable
  public mutating func combine(_ value: Int64) { combine(UInt64(bitPattern: value)) }

  /// Feeds `value` as a 64-bit integer: 8 little-endian bytes.
  @inlinable
  public mutating func combine(_ value: Int) { combine(UInt64(bitPattern: Int64(value))) }

  /// Feeds the string's UTF-8 bytes, then its length in bytes as 8 little-endian bytes.
  public mutating func combine(_ string: String) {
    var count: UInt64 = 0
    for byte in string.utf8 {
      combine(byte: byte)
      count += 1
    }
    combine(count)
  }

  /// FNV-1a of a whole string, as one value.
  public static func hash(_ string: String) -> UInt64 {
    var h = StableHasher()
    h.combine(string)
    return h.value
  }
}
