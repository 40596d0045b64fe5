/// SplitMix64 (Steele, Lea, Flood 2014): used only to expand one 64-bit seed into the state of
/// ``SimRandom``, and to derive independent sub-streams.
@frozen
@_spi(Kernel) public struct SplitMix64: Sendable {
  /// The generator's whole state: the seed, advanced by a fixed odd constant with every draw.
  public var state: UInt64

  /// A generator starting from `seed`; the same seed gives the same sequence.
  @inlinable
  public init(seed: UInt64) { state = seed }

  /// The next 64 pseudo-random bits.
  @inlinable
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
