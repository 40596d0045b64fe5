import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct SimRandomTests {
  @Test func splitMixMatchesTheReferenceSequence() {
    var sm = SplitMix64(seed: 0)
    #expect(sm.next() == 0xe220_a839_7b1d_cdaf)
    #expect(sm.next() == 0x6e78_9e6a_a1b9_65f4)
    #expect(sm.next() == 0x06c4_5d18_8009_454f)
  }

  @Test func xoshiroMatchesTheReferenceSequence() {
    // Values from an independent implementation of SplitMix64-seeded xoshiro256**.
    var rng = SimRandom(seed: 42)
    #expect(rng.next() == 0x1578_0b2e_0c2e_c716)
    #expect(rng.next() == 0x6104_d986_6d11_3a7e)
    #expect(rng.next() == 0xae17_5332_39e4_99a1)
    #expect(rng.next() == 0xecb8_ad47_03b3_60a1)
  }

  @Test func belowStaysInRangeAndCoversItEvenly() {
    var rng = SimRandom(seed: 9)
    var counts = [Int](repeating: 0, count: 7)
    for _ in 0..<70_000 { counts[Int(rng.below(7))] += 1 }
    // Each bucket expects 10,000; 5 standard deviations is about ±470.
    for c in counts { #expect(abs(c - 10_000) < 500, "\(counts)") }
    #expect(rng.below(1) == 0)
  }

  @Test func intInRangeHandlesTheExtremes() {
    var rng = SimRandom(seed: 1)
    for _ in 0..<1_000 {
      let v = rng.int(in: -3...3)
      #expect((-3...3).contains(v))
    }
    _ = rng.int(in: Int64.min...Int64.max)
    #expect(rng.int(in: 5...5) == 5)
    #expect(rng.int(in: 4..<5) == 4)
  }

  @Test func chanceUsesExactFractions() {
    var rng = SimRandom(seed: 2)
    var never = 0
    var always = 0
    var hits = 0
    for _ in 0..<1_000 {
      if rng.chance(0, outOf: 10) { never += 1 }
      if rng.chance(10, outOf: 10) { always += 1 }
    }
    for _ in 0..<100_000 where rng.chance(Probability(1, outOf: 100)) { hits += 1 }
    #expect(never == 0)
    #expect(always == 1_000)
    #expect(abs(hits - 1_000) < 160)
  }

  @Test func streamsAreReproducibleAndIndependent() {
    var a1 = SimRandom(seed: 5, stream: "network")
    var a2 = SimRandom(seed: 5, stream: "network")
    var b = SimRandom(seed: 5, stream: "workload")
    var c = SimRandom(seed: 5, stream: "network", index: 1)
    let x = (0..<4).map { _ in a1.next() }
    #expect(x == (0..<4).map { _ in a2.next() })
    #expect(x != (0..<4).map { _ in b.next() })
    #expect(x != (0..<4).map { _ in c.next() })
  }

  @Test func shuffleIsADeterministicPermutation() {
    var r1 = SimRandom(seed: 11)
    var r2 = SimRandom(seed: 11)
    var a = Array(0..<50)
    var b = Array(0..<50)
    r1.shuffle(&a)
    r2.shuffle(&b)
    #expect(a == b)
    #expect(a != Array(0..<50))
    #expect(a.sorted() == Array(0..<50))
  }

  @Test func chooseAndSampleStayInsideThePopulation() {
    var rng = SimRandom(seed: 12)
    #expect(rng.choose(from: [Int]()) == nil)
    for _ in 0..<100 {
      #expect(["a", "b", "c"].contains(rng.choose(from: ["a", "b", "c"])!))
      let sample = rng.sampleIndices(5, from: 12)
      #expect(sample.count == 5)
      #expect(sample == sample.sorted())
      #expect(Set(sample).count == 5)
      #expect(sample.allSatisfy { (0..<12).contains($0) })
    }
    #expect(rng.sampleIndices(4, from: 4) == [0, 1, 2, 3])
  }

  @Test func stableLogAgreesWithTheLibraryLog() {
    // The library log is the reference here only; the simulator never calls it.
    var rng = SimRandom(seed: 13)
    for _ in 0..<10_000 {
      let x = 1.0 - rng.unitInterval()
      let ours = StableMath.log(x)
      let reference = _libraryLog(x)
      #expect(abs(ours - reference) <= 1e-14 * max(1, abs(reference)), "log(\(x))")
    }
    #expect(StableMath.log(1) == 0)
    #expect(abs(StableMath.log(1e-300) - _libraryLog(1e-300)) < 1e-12)
  }

  @Test(arguments: ["1%": Probability(1, outOf: 100), "0.5%": Probability(5, outOf: 1_000), "100%": Probability(1, outOf: 1)])
  func percentagesParseToExactFractions(text: String, expected: Probability) throws {
    let p = try #require(Probability.parsePercent(text))
    #expect(p.numerator * expected.denominator == expected.numerator * p.denominator)
    #expect(p.description == text)
  }

  @Test func badPercentagesDoNotParse() {
    for s in ["1", "101%", "-1%", "%", "1.%", "abc%", "1.1234567%", "1e2%"] {
      #expect(Probability.parsePercent(s) == nil, "\(s)")
    }
  }
}

#if canImport(Glibc)
  import Glibc
  func _libraryLog(_ x: Double) -> Double { Glibc.log(x) }
#else
  import Foundation
  func _libraryLog(_ x: Double) -> Double { Foundation.log(x) }
#endif
