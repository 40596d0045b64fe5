import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Every numeric limit is tested at its exact boundary, and the message for a value beyond it
/// states the limit that is really applied.
@Suite struct ScenarioLimitsTests {
  static let int64Range = "write a whole number from -9223372036854775808 to 9223372036854775807"
  static let durationLimit = "at most 9223372036854775807ns (about 106751 days)"

  @Test func integersAreSixtyFourBitsBothWays() throws {
    let type = "devices a\ntype T\n  n: int = "
    #expect(try parsed(type + "9223372036854775807").schema.types[0].fields[0].defaultValue == .int(.max))
    #expect(try parsed(type + "-9223372036854775808").schema.types[0].fields[0].defaultValue == .int(.min))
    #expect(messages(type + "9223372036854775808") == ["number 9223372036854775808 does not fit in 64 bits: \(Self.int64Range)"])
    #expect(messages(type + "-9223372036854775809") == ["number -9223372036854775809 does not fit in 64 bits: \(Self.int64Range)"])
  }

  @Test func durationsAreSixtyFourBitsOfNanoseconds() throws {
    #expect(try parsed("devices a\nautosync 9223372036854775807ns").autosync == .nanoseconds(.max))
    #expect(try parsed("devices a\nautosync 106751d").autosync == .days(106_751))
    #expect(
      messages("devices a\nautosync 9223372036854775808ns") == ["duration '9223372036854775808ns' is too long: \(Self.durationLimit)"])
    #expect(messages("devices a\nautosync 106752d") == ["duration '106752d' is too long: \(Self.durationLimit)"])
    #expect(
      messages("devices a\npolicy crdt retention=106752d") == [
        "invalid retention '106752d': duration '106752d' is too long: \(Self.durationLimit)"
      ])
  }

  @Test func timesAndClockChangesAreWithinTenYears() throws {
    #expect(try parsed("devices a\nat 3650d sync").timeline.map(\.time) == [.days(3_650)])
    #expect(try parsed("devices a\nat 1s a clock -3650d").timeline.map(\.action) == [.clockJump(device: "a", by: .days(-3_650))])
    #expect(messages("devices a\nat 315360000000000001ns sync") == ["time 315360000000000001ns is beyond the limit of 3650d"])
    #expect(messages("devices a\nclock a skew -315360000000000001ns") == ["clock skew -315360000000000001ns is beyond the limit of 3650d"])
    #expect(messages("devices a\nat 106752d sync") == ["time 106752d is beyond the limit of 3650d"])
  }

  @Test func seedsAndCountsUseTheirWholeRange() throws {
    #expect(try parsed("devices a\nseed 18446744073709551615").seed == .max)
    #expect(try parsed("devices a\nseed 0").seed == 0)
    #expect(
      messages("devices a\nseed 18446744073709551616") == ["the seed is a whole number from 0 to 18446744073709551615; found '18446744073709551616'"])
    let count = try parsed("devices a\nexpect lost-edit <= 9223372036854775807").expectations.map(\.kind)
    #expect(count == [.count(kind: "lost-edit", comparison: .atMost, value: .max)])
    #expect(messages("devices a\nexpect lost-edit <= 9223372036854775808") == ["expected a count: a whole number from 0 to 9223372036854775807"])
  }

  @Test func driftIsAMillionPPMEitherWayHoweverItIsWritten() throws {
    #expect(try parsed("devices a\nclock a skew 0s drift 1000000ppm").clocks.map(\.driftPPM) == [1_000_000])
    #expect(try parsed("devices a\nclock a skew 0s drift -1000000 ppm").clocks.map(\.driftPPM) == [-1_000_000])
    #expect(try parsed("devices a\nclock a skew 0s drift +00000040ppm").clocks.map(\.driftPPM) == [40], "leading zeros")
    #expect(
      messages("devices a\nclock a skew 0s drift 1000001ppm") == [
        "the drift is a whole number of ppm from -1000000 to +1000000; '1000001ppm' is out of range"
      ])
    #expect(
      messages("devices a\nclock a skew 0s drift 00001000001ppm") == [
        "the drift is a whole number of ppm from -1000000 to +1000000; '00001000001ppm' is out of range"
      ])
  }

  @Test func percentagesAndBatchesAtTheirBounds() throws {
    #expect(try parsed("devices a\nloss 100%").loss == .always)
    #expect(try parsed("devices a\nloss 0.000001%").loss == Probability(1, outOf: 100_000_000))
    let percent = "expected a percentage from 0% to 100%, such as 1% or 0.5% (at most six decimals); write 'loss P%'"
    #expect(messages("devices a\nloss 100.000001%") == [percent])
    #expect(messages("devices a\nloss 0.0000001%") == [percent])
    #expect(try parsed("devices a\npolicy crdt batch=10000").policy.settings.batch == 10_000)
    #expect(try parsed("devices a\npolicy crdt batch=1").policy.settings.batch == 1)
    #expect(
      messages("devices a\npolicy crdt batch=10001") == ["invalid value '10001' for policy key 'batch'; expected a whole number from 1 to 10000"])
    #expect(messages("devices a\npolicy crdt batch=0") == ["invalid value '0' for policy key 'batch'; expected a whole number from 1 to 10000"])
  }
}

/// Messages are one sentence without a final period; a suggestion ends it, and nothing is
/// appended after its question mark.
@Suite struct ScenarioMessagePunctuationTests {
  static func check(_ message: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let scalars = Array(message.unicodeScalars)
    for (a, b) in zip(scalars, scalars.dropFirst()) where a == "?" && ".;,:!?".unicodeScalars.contains(b) {
      Issue.record("doubled punctuation in: \(message)", sourceLocation: sourceLocation)
    }
    if message.hasSuffix("."), !message.hasSuffix("...") {
      Issue.record("a message ends with a period: \(message)", sourceLocation: sourceLocation)
    }
  }

  @Test func noMessageOfAMutatedScenarioDoublesItsPunctuation() {
    for (name, text) in Fixtures.all + Fixtures.repositoryScenarios() {
      var mutator = Mutator(rng: SimRandom(seed: 11, stream: "punctuation:" + name))
      for _ in 0..<40 {
        guard case .failure(let errors) = ScenarioParser.parse(mutator.mutate(text), source: "m") else { continue }
        for d in errors.diagnostics { Self.check(d.message) }
      }
    }
  }

  @Test func suggestionsFromPoliciesAndDurationsEndTheirMessage() {
    for line in [
      "policy crdt winner=clok", "policy crdt winer=clock", "policy cloudkit-defualt", "policy crdt retention=3sec", "autosync 2sec",
      "at 1s a clock 2mins", "at 1s a snyc", "expect converge", "Seed 1", "type T append", "clock a skew 1s drfit 4ppm",
    ] {
      let found = messages("devices a\n" + line)
      #expect(found.contains { $0.hasSuffix("'?") }, "\(line): \(found)")
      for m in found { Self.check(m) }
    }
  }
}
