import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

@Suite struct ScenarioParserTests {
  @Test func theSpecExampleParsesToTheExpectedStructure() throws {
    let file = try parsed(Fixtures.twoDeviceAcceptance, source: "scenarios/two-device-acceptance.scenario")
    #expect(file.source == "scenarios/two-device-acceptance.scenario")
    #expect(file.name == "two-device-acceptance")
    #expect(file.about == "Both devices offline; appends on each, the same preference on both; then online.")
    #expect(file.devices == ["iPad", "phone"])
    #expect(file.policy.description == "append-only")
    #expect(file.policyLocation == Loc(line: 5, column: 1))
    #expect(file.seed == 1)
    #expect(file.latency == .uniform(.milliseconds(20), .milliseconds(300)))
    #expect(file.loss == Probability(1, outOf: 100))
    #expect(file.duplicate == .never)
    #expect(file.clocks == [ClockSetting(device: "phone", skew: .seconds(2), driftPPM: 40, location: Loc(line: 10, column: 1))])
    #expect(file.retention == .days(30))
    #expect(file.autosync == .seconds(1))
    #expect(file.push == .on)
    #expect(
      file.schema
        == Schema(types: [
          RecordType(
            name: "Note",
            fields: [
              FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
              FieldSpec(name: "body", kind: .text, defaultValue: .text(TextValue("", by: 0))),
            ]),
          RecordType(
            name: "Stroke", appendOnly: true,
            fields: [
              FieldSpec(name: "note", kind: .ref("Note"), optional: true),
              FieldSpec(name: "points", kind: .string, defaultValue: .string("")),
            ]),
          RecordType(name: "Preference", fields: [FieldSpec(name: "value", kind: .string, defaultValue: .string("light"), mutable: true)]),
        ]))
    func at(_ line: Int, _ column: Int) -> Loc { Loc(line: line, column: column) }
    #expect(
      file.timeline == [
        TimelineEntry(
          time: .zero,
          action: .create(
            device: "iPad", type: "Note", id: "n1",
            fields: [
              Assignment(field: "title", value: .string("Sermon"), location: at(22, 31)),
              Assignment(field: "body", value: .string("In the beginning"), location: at(22, 46)),
            ]), location: at(22, 1)),
        TimelineEntry(time: .zero, action: .create(device: "iPad", type: "Preference", id: "theme", fields: []), location: at(23, 1)),
        TimelineEntry(time: .seconds(1), action: .syncAll, location: at(24, 1)),
        TimelineEntry(time: .seconds(2), action: .offline(["iPad", "phone"]), location: at(25, 1)),
        TimelineEntry(
          time: .seconds(3),
          action: .create(
            device: "iPad", type: "Stroke", id: "s1",
            fields: [
              Assignment(field: "note", value: .identifier("n1"), location: at(26, 33)),
              Assignment(field: "points", value: .string("a"), location: at(26, 41)),
            ]), location: at(26, 1)),
        TimelineEntry(
          time: .seconds(3),
          action: .create(
            device: "phone", type: "Stroke", id: "s2",
            fields: [
              Assignment(field: "note", value: .identifier("n1"), location: at(27, 33)),
              Assignment(field: "points", value: .string("b"), location: at(27, 41)),
            ]), location: at(27, 1)),
        TimelineEntry(
          time: .seconds(4),
          action: .set(
            device: "iPad", id: "theme",
            fields: [
              Assignment(field: "value", value: .string("dark"), location: at(28, 26))
            ]), location: at(28, 1)),
        TimelineEntry(
          time: .milliseconds(4_500),
          action: .set(
            device: "phone", id: "theme",
            fields: [
              Assignment(field: "value", value: .string("sepia"), location: at(29, 26))
            ]), location: at(29, 1)),
        TimelineEntry(time: .seconds(10), action: .online(["iPad", "phone"]), location: at(30, 1)),
      ])
    #expect(
      file.expectations == [
        Expectation(kind: .noViolations, text: "expect no violations", location: at(33, 1)),
        Expectation(
          kind: .fieldIn(id: "theme", field: "value", values: [.string("dark"), .string("sepia")]),
          text: "expect theme.value in \"dark\" \"sepia\"", location: at(34, 1)),
      ])
  }

  @Test func everyHeaderStatementIsRead() throws {
    let file = try parsed(Fixtures.kitchenSink)
    #expect(file.name == "kitchen-sink")
    #expect(file.about == "Every statement, \"quoted\" and \\ escaped,\nacross lines.")
    #expect(file.devices == ["mac", "iPad", "phone", "watch"])
    #expect(file.policy.description == "field-lww-hlc delete=tombstone retention=7d")
    #expect(file.policy.settings.retention == .days(7))
    #expect(file.seed == UInt64.max)
    #expect(file.latency == .fixed(.milliseconds(5)))
    #expect(file.loss == Probability(1, outOf: 200))
    #expect(file.duplicate == Probability(1, outOf: 50))
    #expect(file.clocks.map(\.device) == ["phone", "iPad", "watch"])
    #expect(file.clocks.map(\.skew) == [.milliseconds(-1_500), .milliseconds(250), .zero])
    #expect(file.clocks.map(\.driftPPM) == [-40, 0, 12])
    #expect(file.retention == .days(45))
    #expect(file.autosync == nil)
    #expect(file.push == .lossy(Probability(9, outOf: 10)))
    #expect(file.schema.deployed == ["Note", "Tag", "Event", "Empty"])
  }

  @Test func defaultsApplyWhenTheHeaderIsSilent() throws {
    let file = try parsed(Fixtures.minimal, source: "some/dir/solo-run.scenario")
    #expect(file.name == "solo-run")
    #expect(file.about == nil)
    #expect(file.devices == ["solo"])
    #expect(file.policy.description == "cloudkit-default")
    #expect(file.policyLocation == nil)
    #expect(file.seed == 1)
    #expect(file.latency == .uniform(.milliseconds(20), .milliseconds(300)))
    #expect(file.loss == .never && file.duplicate == .never)
    #expect(file.clocks.isEmpty && file.retention == nil)
    #expect(file.autosync == .seconds(1))
    #expect(file.push == .on)
    #expect(file.schema == Schema(types: []))
    #expect(file.timeline.isEmpty, "no settle is added: the runner implies it")
    #expect(file.expectations.isEmpty, "no expectation is added: the runner applies 'expect no violations'")
  }

  @Test func theNameComesFromTheFileWhenThereIsNoScenarioLine() throws {
    #expect(try parsed("devices a", source: "x.scenario").name == "x")
    #expect(try parsed("devices a", source: "/tmp/deep/path/y.scenario").name == "y")
    #expect(try parsed("devices a", source: "notes.txt").name == "notes.txt")
    #expect(try parsed("scenario \"with spaces\"\ndevices a", source: "z.scenario").name == "with spaces")
  }

  @Test func pushAndAutosyncAcceptEveryForm() throws {
    #expect(try parsed("devices a\npush off").push == .off)
    #expect(try parsed("devices a\npush on").push == .on)
    #expect(try parsed("devices a\npush 100%").push == .lossy(.always))
    #expect(try parsed("devices a\nautosync 250ms").autosync == .milliseconds(250))
    #expect(try parsed("devices a\nautosync off").autosync == nil)
    #expect(try parsed("devices a\nloss 1.0%").loss == Probability(1, outOf: 100), "percentages are kept in lowest terms")
    #expect(try parsed("devices a\nloss 0%").loss == .never)
  }

  @Test func clockDriftIsAcceptedWithOrWithoutSignAndSpace() throws {
    for (text, drift) in [("+40ppm", Int64(40)), ("40 ppm", 40), ("-40ppm", -40), ("+40 ppm", 40), ("1000000ppm", 1_000_000)] {
      let file = try parsed("devices a\nclock a skew 2s drift \(text)")
      #expect(file.clocks.first?.driftPPM == drift, "\(text)")
      #expect(file.clocks.first?.skew == .seconds(2))
    }
  }

  @Test func everySchemaFormIsRead() throws {
    let file = try parsed(Fixtures.kitchenSink)
    let note = try #require(file.schema.types.first)
    #expect(
      note.fields == [
        FieldSpec(name: "title", kind: .string, optional: true, mutable: true),
        FieldSpec(name: "body", kind: .text, defaultValue: .text(TextValue("draft", by: 0))),
        FieldSpec(name: "rank", kind: .int, defaultValue: .int(-7), unique: true),
        FieldSpec(name: "pinned", kind: .bool, defaultValue: .bool(false), mutable: true),
        FieldSpec(name: "due", kind: .date, optional: true, defaultValue: .date(5_400_000_000_000)),
        FieldSpec(name: "tag", kind: .ref("Tag"), optional: true),
      ])
    #expect(file.schema.types.map(\.name) == ["Note", "Tag", "Event", "Empty"])
    #expect(file.schema.types.map(\.appendOnly) == [false, false, true, false])
    #expect(file.schema.types[3].fields.isEmpty, "a type with no fields is fine")
  }

  @Test func cloudKitUnsafeFieldsAreLegalAndLeftToTheLinter() throws {
    let file = try parsed("devices a\ntype Event append-only\n  note: ref Note\n  name: string unique\n  at: date\ntype Note")
    #expect(file.schema.safetyFindings().map(\.problem) == [.requiredReference, .requiredWithoutDefault, .uniqueConstraint, .requiredWithoutDefault])
  }

  @Test func fieldLinesAcceptLooseSpacingAndModifiersInAnyOrder() throws {
    let file = try parsed("devices a\ntype T\n\ta:string=\"x\"\n  b : int unique mutable = 4\n  c:bool ?".replacingOccurrences(of: " ?", with: "?"))
    #expect(
      file.schema.types[0].fields == [
        FieldSpec(name: "a", kind: .string, defaultValue: .string("x")),
        FieldSpec(name: "b", kind: .int, defaultValue: .int(4), mutable: true, unique: true),
        FieldSpec(name: "c", kind: .bool, optional: true),
      ])
  }

  @Test func everyTimelineActionMapsOntoTheAST() throws {
    let file = try parsed(Fixtures.kitchenSink)
    let actions = file.timeline.map(\.action)
    #expect(
      actions == [
        .create(
          device: "mac", type: "Tag", id: "t1", fields: [Assignment(field: "label", value: .string("work"), location: Loc(line: 33, column: 25))]),
        .create(
          device: "mac", type: "Note", id: "n1",
          fields: [
            Assignment(field: "title", value: .string("Plan"), location: Loc(line: 34, column: 26)),
            Assignment(field: "tag", value: .identifier("t1"), location: Loc(line: 34, column: 39)),
            Assignment(field: "rank", value: .int(3), location: Loc(line: 34, column: 46)),
            Assignment(field: "pinned", value: .bool(true), location: Loc(line: 34, column: 53)),
            Assignment(field: "due", value: .duration(.days(2)), location: Loc(line: 34, column: 65)),
          ]),
        .create(
          device: "iPad", type: "Event", id: "e1",
          fields: [
            Assignment(field: "note", value: .identifier("n1"), location: Loc(line: 35, column: 31)),
            Assignment(field: "at", value: .duration(.seconds(1)), location: Loc(line: 35, column: 39)),
          ]),
        .syncAll,
        .sync(device: "phone"),
        .offline(["phone", "watch"]),
        .set(
          device: "mac", id: "n1",
          fields: [
            Assignment(field: "title", value: .string("Plan B"), location: Loc(line: 39, column: 18)),
            Assignment(field: "pinned", value: .bool(false), location: Loc(line: 39, column: 33)),
          ]),
        .append(device: "phone", id: "n1", field: "body", text: " more"),
        .replace(device: "phone", id: "n1", field: "body", old: "draft", new: "final"),
        .serverDown,
        .kill(device: "watch"),
        .background(device: "watch", budget: .seconds(30)),
        .clockJump(device: "iPad", by: .seconds(-2)),
        .clockJump(device: "mac", by: .milliseconds(500)),
        .serverUp,
        .online(["phone", "watch"]),
        .delete(device: "mac", id: "t1"),
        .settle,
      ])
  }

  @Test func theTimelineIsStableSortedByTimeAndSettleComesLast() throws {
    let file = try parsed(
      """
      devices a b
      at 3s a sync
      at 1s b sync
      at 5s settle
      at 1s a sync
      at 5s b kill
      at 0s sync
      """)
    #expect(file.timeline.map(\.action) == [.syncAll, .sync(device: "b"), .sync(device: "a"), .sync(device: "a"), .kill(device: "b"), .settle])
    #expect(file.timeline.map(\.location.line) == [7, 3, 5, 2, 6, 4])
  }

  @Test func aStandaloneSettleAddsNoEntry() throws {
    let file = try parsed("devices a\nat 1s a sync\nsettle\nexpect converged")
    #expect(file.timeline.map(\.action) == [.sync(device: "a")])
    #expect(file.expectations.map(\.kind) == [.converged])
  }

  @Test func everyExpectationFormIsRead() throws {
    let file = try parsed(Fixtures.kitchenSink)
    #expect(
      file.expectations.map(\.kind) == [
        .noViolations,
        .none(kind: "lost-edit"),
        .count(kind: "stale-overwrite", comparison: .equal, value: 0),
        .count(kind: "divergence", comparison: .atMost, value: 1),
        .count(kind: "concurrent-overwrite", comparison: .atLeast, value: 0),
        .converged,
        .fieldEquals(id: "n1", field: "title", value: .string("Plan B")),
        .fieldEquals(id: "n1", field: "rank", value: .int(3)),
        .fieldIn(id: "n1", field: "pinned", values: [.bool(true), .bool(false)]),
        .fieldEquals(id: "n1", field: "due", value: .duration(.days(2))),
        .fieldEquals(id: "n1", field: "tag", value: .identifier("t1")),
        .exists(id: "e1"),
        .deleted(id: "t1"),
      ])
    #expect(file.expectations.map(\.location.line) == Array(51...63))
  }

  @Test func anExpectationKeepsItsTextTrimmedWithoutTheComment() throws {
    let file = try parsed("devices a\n   \nexpect   no  violations   # the default\n")
    #expect(file.expectations.map(\.text) == ["expect   no  violations"])
  }

  @Test func everyAnomalyKindCanBeExpected() throws {
    let kinds = [
      "lost-edit", "stale-overwrite", "resurrection", "dropped-event", "duplicate-event", "stranded-record", "divergence",
      "phantom-value", "concurrent-overwrite", "delete-update-conflict",
    ]
    let file = try parsed("devices a\n" + kinds.map { "expect no \($0)\nexpect \($0) >= 0" }.joined(separator: "\n"))
    #expect(file.expectations.count == 20)
  }

  @Test func windowsLineEndingsAByteOrderMarkTabsAndUnicodeAreAccepted() throws {
    let file = try parsed(Fixtures.oddButValid)
    #expect(file.name == "spaces and ünïcødé 🎉")
    #expect(file.devices == ["iPad", "phone"])
    #expect(file.schema.types[0].fields.map(\.defaultValue) == [.string("é#not a comment"), .text(TextValue("👩‍👩‍👧", by: 0)), nil])
    #expect(
      file.timeline.map(\.action) == [
        .create(
          device: "phone", type: "Note", id: "n2",
          fields: [
            Assignment(field: "count", value: .int(.min), location: Loc(line: 11, column: 30))
          ]),
        .create(
          device: "iPad", type: "Note", id: "n1",
          fields: [
            Assignment(field: "title", value: .string("ça \"va\"\n"), location: Loc(line: 10, column: 27)),
            Assignment(field: "body", value: .string("x"), location: Loc(line: 10, column: 47)),
          ]),
      ])
    #expect(file.expectations.map(\.text) == ["expect n1.title == \"ça \\\"va\\\"\\n\""])
  }

  @Test func columnsCountCharactersNotBytesOrScalars() {
    // "👩‍👩‍👧" is one Character (five scalars), "é" one: the caret is under 'ipad'.
    let text = "devices iPad\nat 1s iPad create Note n1 title=\"👩‍👩‍👧é\" x=ipad\ntype Note\n  title: string"
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "u.scenario") else {
      Issue.record("expected an error")
      return
    }
    #expect(errors.diagnostics.map(\.location) == [Loc(line: 2, column: 38)])
  }
}
