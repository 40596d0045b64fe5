import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// `NameKeys` (the compiler's name → key table) must answer exactly as the `[String: RecordKey]`
/// it replaced: the same first key per name, the same misses — including for names that are not
/// ASCII, which Swift compares by canonical equivalence (a Kelvin sign equals the letter K).
@Suite struct NameKeysTests {
  /// Random operations against a dictionary, with names drawn from a small alphabet so that
  /// inserts repeat and lookups miss; with `unicode`, some names are not ASCII.
  func agrees(seed: UInt64, unicode: Bool) -> (checks: Int, mismatches: Int) {
    var r = SimRandom(seed: seed)
    let pieces = unicode ? ["n", "K", "\u{212A}", "e\u{301}", "\u{E9}", "1", "2", ";", "\u{37E}"] : ["n", "s", "f", "1", "2", "3", "-", "_"]
    var table = NameKeys(capacity: Int(r.int(in: 0...4)))
    var reference: [String: RecordKey] = [:]
    var checks = 0
    var mismatches = 0
    for step in 0..<3_000 {
      var name = ""
      for _ in 0..<r.int(in: 1...4) { name += pieces[r.int(in: 0..<pieces.count)] }
      if r.chance(1, outOf: 2) {
        let added = table.insertIfAbsent(name, RecordKey(step))
        let expected = reference[name] == nil
        if expected { reference[name] = RecordKey(step) }
        if added != expected { mismatches += 1 }
      } else {
        if table[name] != reference[name] { mismatches += 1 }
      }
      checks += 1
    }
    for (name, key) in reference where table[name] != key { mismatches += 1 }
    return (checks, mismatches)
  }

  @Test func agreesWithADictionaryOnASCIINames() {
    for seed in 1...8 as ClosedRange<UInt64> {
      let (checks, mismatches) = agrees(seed: seed, unicode: false)
      #expect(checks == 3_000)
      #expect(mismatches == 0, "seed \(seed)")
    }
  }

  @Test func agreesWithADictionaryOnNamesThatAreNotASCII() {
    for seed in 1...8 as ClosedRange<UInt64> {
      let (_, mismatches) = agrees(seed: seed, unicode: true)
      #expect(mismatches == 0, "seed \(seed)")
    }
  }

  /// The cases byte hashing alone would get wrong: an ASCII name found by an equivalent name
  /// that is not ASCII, before and after the table turns into a dictionary.
  @Test func findsCanonicallyEquivalentNames() {
    var table = NameKeys()
    let addedK1 = table.insertIfAbsent("K1", 7)
    #expect(addedK1)
    #expect(table["\u{212A}1"] == 7)  // KELVIN SIGN + 1 == "K1" in Swift
    let addedKelvin = table.insertIfAbsent("\u{212A}1", 8)
    #expect(!addedKelvin)
    let addedCafe = table.insertIfAbsent("caf\u{E9}", 9)
    #expect(addedCafe)
    #expect(table["cafe\u{301}"] == 9)
    #expect(table["K1"] == 7)
    #expect(table["k1"] == nil)
  }
}
