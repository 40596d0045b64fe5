import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

@Suite struct ScenarioWriterTests {
  @Test(arguments: Fixtures.all.map(\.name))
  func everyFixtureRoundTripsThroughTheWriter(name: String) throws {
    let text = try #require(Fixtures.all.first { $0.name == name }).text
    let original = try parsed(text, source: "\(name).scenario")
    let written = original.rendered()
    let reread = try parsed(written, source: "elsewhere.scenario")
    #expect(reread.withoutLocations == original.withoutLocations, "\(written)")
    #expect(reread.rendered() == written, "writing is idempotent")
  }

  @Test func theSpecExampleIsWrittenCanonically() throws {
    let file = try parsed(Fixtures.twoDeviceAcceptance)
    #expect(
      file.rendered() == """
        scenario two-device-acceptance
        about "Both devices offline; appends on each, the same preference on both; then online."

        devices iPad phone
        policy append-only
        seed 1

        latency 20ms..300ms
        loss 1%
        clock phone skew +2s drift 40ppm
        retention 30d

        type Note
          title: string = "" mutable
          body: text = ""

        type Stroke append-only
          note: ref Note?
          points: string = ""

        type Preference
          value: string = "light" mutable

        at 0s iPad create Note n1 title="Sermon" body="In the beginning"
        at 0s iPad create Preference theme
        at 1s sync
        at 2s offline iPad phone
        at 3s iPad create Stroke s1 note=n1 points="a"
        at 3s phone create Stroke s2 note=n1 points="b"
        at 4s iPad set theme value="dark"
        at 4.5s phone set theme value="sepia"
        at 10s online iPad phone
        settle

        expect no violations
        expect theme.value in "dark" "sepia"

        """)
  }

  @Test func aBuiltScenarioRoundTripsIncludingTheHardCases() throws {
    let policy = try PolicySpec.parse("crdt batch=5").get()
    let tricky = "quote\"\u{301} back\\\u{301} nl\n cr\r tab\t nul\u{0} # not a comment"
    let file = ScenarioFile(
      source: "built", name: "a name with spaces", about: tricky, devices: ["a", "b-2", "C_3"], policy: policy, seed: 0,
      latency: .fixed(.nanoseconds(1)), loss: Probability(1, outOf: 1_000_000), duplicate: .always,
      clocks: [
        ClockSetting(device: "a", skew: .milliseconds(-1), driftPPM: 0, location: Loc(line: 1, column: 1)),
        ClockSetting(device: "b-2", skew: .zero, driftPPM: -1_000_000, location: Loc(line: 1, column: 1)),
      ],
      retention: .nanoseconds(1), autosync: nil, push: .lossy(Probability(1, outOf: 4)),
      schema: Schema(
        types: [
          RecordType(
            name: "T", appendOnly: true,
            fields: [
              FieldSpec(name: "s", kind: .string, optional: true, defaultValue: .string(tricky), mutable: true, unique: true),
              FieldSpec(name: "x", kind: .text, defaultValue: .text(TextValue(tricky, by: 0))),
              FieldSpec(name: "i", kind: .int, defaultValue: .int(.min)),
              FieldSpec(name: "d", kind: .date, defaultValue: .date(1)),
              FieldSpec(name: "r", kind: .ref("U")),
            ]),
          RecordType(name: "U", fields: []),
        ], deployed: []),
      timeline: [
        TimelineEntry(time: .days(3650), action: .settle, location: Loc(line: 1, column: 1)),
        TimelineEntry(time: .days(3650), action: .clockJump(device: "a", by: .days(-3650)), location: Loc(line: 1, column: 1)),
        TimelineEntry(time: .zero, action: .create(device: "C_3", type: "U", id: "u1", fields: []), location: Loc(line: 1, column: 1)),
        TimelineEntry(
          time: .nanoseconds(1),
          action: .create(
            device: "a", type: "T", id: "t1",
            fields: [
              Assignment(field: "s", value: .string(tricky), location: Loc(line: 1, column: 1)),
              Assignment(field: "r", value: .identifier("u1"), location: Loc(line: 1, column: 1)),
              Assignment(field: "i", value: .int(.max), location: Loc(line: 1, column: 1)),
              Assignment(field: "d", value: .duration(.milliseconds(1_001)), location: Loc(line: 1, column: 1)),
            ]), location: Loc(line: 1, column: 1)),
        TimelineEntry(time: .seconds(90), action: .set(device: "b-2", id: "u1", fields: []), location: Loc(line: 1, column: 1)),
        TimelineEntry(time: .seconds(90), action: .background(device: "b-2", budget: .microseconds(3)), location: Loc(line: 1, column: 1)),
      ],
      expectations: [
        Expectation(kind: .fieldEquals(id: "t1", field: "s", value: .string(tricky)), text: "", location: Loc(line: 1, column: 1)),
        Expectation(
          kind: .count(kind: "divergence", comparison: .atMost, value: Int.max), text: "expect something else", location: Loc(line: 1, column: 1)),
      ])
    let written = file.rendered()
    // `set` with no fields cannot be written back (the parser requires one): drop it to compare.
    var expected = file
    expected.timeline = expected.timeline.filter { if case .set = $0.action { return false } else { return true } }
    let reread = try parsed(expected.rendered())
    var want = expected.withoutLocations
    // Sorted by time, settle last; expectation texts become what the writer wrote.
    want.timeline = [want.timeline[2], want.timeline[3], want.timeline[4], want.timeline[1], want.timeline[0]]
    want.expectations = reread.expectations.map {
      var e = $0
      e.location = Loc(line: 0, column: 0)
      return e
    }
    #expect(reread.withoutLocations == want, "\(written)")
    #expect(reread.expectations.map(\.kind) == file.expectations.map(\.kind))
  }

  @Test func anExpectationKeepsItsOwnTextWhenItStillSaysTheSameThing() throws {
    let file = try parsed("devices a\nexpect   no    violations  # spaced out\nexpect converged")
    #expect(file.rendered().hasSuffix("settle\n\nexpect   no    violations\nexpect converged\n"))
    var changed = file
    changed.expectations[0].kind = .none(kind: "lost-edit")
    #expect(changed.rendered().hasSuffix("settle\n\nexpect no lost-edit\nexpect converged\n"), "a stale text gives way to the kind")
  }

  @Test func anExponentialLatencyIsWrittenAsItsMean() throws {
    var file = try parsed("devices a")
    file.latency = .exponential(minimum: .milliseconds(10), mean: .milliseconds(80))
    #expect(file.rendered().contains("\nlatency 80ms\n"))
    #expect(try parsed(file.rendered()).latency == .fixed(.milliseconds(80)))
  }

  @Test func theDefaultPolicyIsWrittenOnlyWhenTheFileNamedIt() throws {
    #expect(!(try parsed("devices a").rendered().contains("policy")))
    #expect(try parsed("devices a\npolicy cloudkit-default").rendered().contains("\npolicy cloudkit-default\n"))
    var overridden = try parsed("devices a")
    overridden.policy = try PolicySpec.parse("crdt").get()
    #expect(overridden.rendered().contains("\npolicy crdt\n"))
  }
}
