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
      let whole = Self.wholeTable(a, b)
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

  /// The optimal-string-alignment distance over the whole table: the reference the band is
  /// checked against (what `Suggestion` computed before it).
  static func wholeTable(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previous2[j - 2] + 1)
        }
      }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
  }
}
