import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

@Suite struct ExplainTests {
  static func explain(_ name: String, policy: String? = nil) throws -> String {
    let spec = try policy.map { try PolicySpec.parse($0).get() }
    return Explanation.render(try Scenario.load(name), policy: spec)
  }

  @Test(arguments: ["fat-note-lww", "lost-ack-hard-delete"])
  func theExplanationMatchesItsGoldenFile(name: String) throws {
    try Golden.check(try Self.explain(name), named: "explain-\(name).txt")
  }

  /// Each names the mechanism, not just the outcome.
  @Test(arguments: [
    ("skewed-clock", ["winner=clock", "clock 601.000s", "(its clock is +10m)", "i3 had already seen i2"]),
    ("fat-note-lww", ["winner=arrival", "arrived at 20.100s, after i2's push", "were concurrent"]),
    ("retention-zombie", ["purges the tombstone of n1", "token expired", "refetch=naive"]),
    ("token-before-apply", ["token=before-apply", "dropped 1 fetched record", "asked for changes since token 1"]),
    ("budget-expires-mid-batch", ["unit=mark-first", "cut off at 3.100s"]),
  ])
  func theExplanationSaysWhyTheWinnerWon(name: String, phrases: [String]) throws {
    let text = try Self.explain(name)
    for p in phrases { #expect(text.contains(p), "\(name): missing '\(p)'\n\(text)") }
  }

  @Test func aRunWithNoAnomaliesSaysSo() throws {
    let text = try Self.explain("fat-note-lww", policy: "crdt")
    #expect(text.contains("No anomalies: nothing to explain."))
    #expect(text.hasSuffix("reproduce: sim-cli explain fat-note-lww --seed 1 --policy crdt\n"))
  }
}
