@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// `CausalContext` against the plainest model of a set of ordinals: after every random insert
/// and union, membership, count, the listed extras and the description agree with a `Set`, and
/// equal sets are equal values (one representation per set).
struct CausalContextTests {
  static func model(_ c: CausalContext, below bound: Int32) -> Set<Int32> {
    Set((1...bound).filter { c.contains($0) })
  }

  static func check(_ c: CausalContext, _ expected: Set<Int32>, bound: Int32, _ what: @autoclosure () -> String) {
    #expect(model(c, below: bound) == expected, "\(what()): \(c) holds the wrong ordinals")
    #expect(c.count == expected.count, "\(what()): count \(c.count) for \(expected.count) ordinals")
    var prefix: Int32 = 0
    while expected.contains(prefix + 1) { prefix += 1 }
    #expect(c.prefix == prefix, "\(what()): prefix \(c.prefix), want \(prefix)")
    #expect(c.extras == expected.filter { $0 > prefix }.sorted(), "\(what()): extras \(c.extras)")
    #expect(c.isEmpty == expected.isEmpty)
    #expect(!c.contains(0) && !c.contains(-1))
  }

  static func build(_ ordinals: [Int32]) -> CausalContext {
    var c = CausalContext()
    for o in ordinals { c.insert(o) }
    return c
  }

  @Test func insertsAndUnionsAgreeWithASet() {
    var rng = SimRandom(seed: 7, stream: "causal-context-test")
    for trial in 0..<600 {
      let bound = Int32(rng.int(in: 1..<41))
      let density = rng.int(in: 1..<10)
      var a = CausalContext()
      var b = CausalContext()
      var sa = Set<Int32>()
      var sb = Set<Int32>()
      for _ in 0..<rng.int(in: 0..<31) {
        let o = Int32(rng.int(in: 1..<Int(bound) + 1))
        if rng.int(in: 0..<10) < density {
          a.insert(o)
          sa.insert(o)
        } else {
          b.insert(o)
          sb.insert(o)
        }
        Self.check(a, sa, bound: bound + 1, "trial \(trial) insert \(o) into a")
        Self.check(b, sb, bound: bound + 1, "trial \(trial) insert \(o) into b")
      }
      var u = a
      u.formUnion(b)
      Self.check(u, sa.union(sb), bound: bound + 1, "trial \(trial): \(a) ∪ \(b)")
      var v = b
      v.formUnion(a)
      #expect(u == v, "trial \(trial): union is not symmetric: \(u) vs \(v)")
      #expect(u == Self.build(sa.union(sb).sorted()), "trial \(trial): two representations of one set")
      #expect(u == Self.build(sa.union(sb).sorted().reversed()), "trial \(trial): insertion order changed the value")
      var w = u
      w.formUnion(a)
      #expect(w == u, "trial \(trial): a union with a subset changed the set")
      // The ledger's union (it skips asking whether it already holds the other) is the same
      // set in the same representation — whether or not the other is in fact new to it.
      for (x, y) in [(a, b), (b, a), (u, a), (a, u)] {
        var plain = x
        plain.formUnion(y)
        var skipping = x
        skipping.formUnion(holdingNew: y)
        #expect(skipping == plain, "trial \(trial): \(x) ∪ \(y) is \(plain), but \(skipping) without the subset check")
      }
    }
  }

  @Test func aFewIntervalsDescribeARecordWithHoles() {
    // 1…100 received except the writes that lost (every tenth from 20): runs, not 80 extras.
    var c = CausalContext()
    for o in Int32(1)...100 where o < 20 || o % 10 != 0 { c.insert(o) }
    #expect(c.prefix == 19)
    #expect(c.runs.count == 8)
    #expect(c.runs.first == 21...29 && c.runs.last == 91...99)
    #expect(c.count == 91)
    #expect(c.description.hasPrefix("{1…19, 21, 22,"))
  }
}

extension CausalContextTests {
  @Test func subsetAgreesWithASet() {
    var rng = SimRandom(seed: 11, stream: "causal-context-subset")
    for trial in 0..<600 {
      var sa = Set<Int32>()
      var sb = Set<Int32>()
      for _ in 0..<rng.int(in: 0..<20) { sa.insert(Int32(rng.int(in: 1..<25))) }
      for _ in 0..<rng.int(in: 0..<20) { sb.insert(Int32(rng.int(in: 1..<25))) }
      if rng.int(in: 0..<3) == 0 { sb.formUnion(sa) }
      let a = Self.build(sa.shuffled(using: &rng))
      let b = Self.build(sb.shuffled(using: &rng))
      #expect(a.isSubset(of: b) == sa.isSubset(of: sb), "trial \(trial): \(a) ⊆ \(b)")
      #expect(b.isSubset(of: a) == sb.isSubset(of: sa), "trial \(trial): \(b) ⊆ \(a)")
    }
  }
}
