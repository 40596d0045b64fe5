import Testing

@_spi(Kernel) @testable import Simulator

/// "Did you mean": the banded distance agrees with the whole table, and a huge word costs
/// time in proportion to its length (issue 28, item 5: a 100 kB name against 20,000 file names
/// took more than a minute).
@Suite struct SuggestionTests {
  @Test func theBandedDistanceAgreesWithTheWholeTable() {
    var random = SplitMix64(seed: 28)
    let alphabet = Array("abcab")
    for _ in 0..<3_000 {
      let a = (0..<Int(random.next() % 9)).map { _ in alphabet[Int(random.next() % 5)] }
      let b = (0..<Int(random.next() % 9)).map { _ in alphabet[Int(random.next() % 5)] }
      let whole = Suggestion.distance(a, b)
      for k in 1...3 {
        #expect(Suggestion.distance(a, b, atMost: k) == (whole <= k ? whole : nil), "\(String(a)) \(String(b)) k=\(k)")
      }
    }
  }

  @Test func aHugeWordIsComparedInABand() {
    // 100,000 characters against 2,000 names of about its length would be 2e13 cells of the
    // whole table; in a band of 2 it is a few million, well under a second in a debug build.
    let word = String(repeating: "ab", count: 50_000)
    var near = Array(word)
    near[25_000] = "x"
    let names = (0..<2_000).map { "scenario-\($0)" } + [String(repeating: "ab", count: 49_999) + "a", String(near)]
    #expect(Suggestion.closest(to: word, in: names) == String(repeating: "ab", count: 49_999) + "a")
    #expect(Suggestion.closest(to: "scenario-1x", in: names) == "scenario-1")
  }
}
