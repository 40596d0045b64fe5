import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Every class of error, each at the right place with a message that says what to do. The line
/// under test is line 7 of ``withLine(_:)``.
@Suite struct ScenarioDiagnosticsTests {
  // MARK: - Exact renderings

  @Test func unknownDeviceSuggestsTheClosestName() {
    #expect(
      rendered(withLine("at 1s ipad sync")) == """
        test.scenario:7:7: error: unknown device 'ipad'; did you mean 'iPad'?
        at 1s ipad sync
              ^
        1 error in test.scenario

        """)
  }

  @Test func unknownStatementSuggestsTheClosestKeyword() {
    #expect(
      rendered(withLine("polcy crdt")) == """
        test.scenario:7:1: error: unknown statement 'polcy'; did you mean 'policy'?
        polcy crdt
        ^
        1 error in test.scenario

        """)
  }

  @Test func updatingAnAppendOnlyRecordIsAnError() {
    #expect(
      rendered(withLine("at 1s iPad set s1 note=n1")) == """
        test.scenario:7:12: error: Stroke is append-only: its records are created once and never updated
        at 1s iPad set s1 note=n1
                   ^
        1 error in test.scenario

        """)
  }

  @Test func aLiteralThatDoesNotFitItsFieldSaysWhatToWrite() {
    #expect(
      rendered(withLine("at 1s iPad set n1 title=Sermon")) == """
        test.scenario:7:25: error: title is a string; write "…"
        at 1s iPad set n1 title=Sermon
                                ^
        1 error in test.scenario

        """)
  }

  @Test func anUnterminatedStringIsReportedAtItsOpeningQuote() {
    #expect(
      rendered(withLine("about \"x")) == """
        test.scenario:7:7: error: unterminated string: add a closing '"'
        about "x
              ^
        1 error in test.scenario

        """)
  }

  @Test func aBadEscapeIsReportedAtItsBackslash() {
    #expect(
      rendered(withLine(#"at 1s iPad append n1.body "a\tb""#)) == #"""
        test.scenario:7:29: error: unknown escape '\t' in a string; the escapes are \" \\ and \n
        at 1s iPad append n1.body "a\tb"
                                    ^
        1 error in test.scenario

        """#)
  }

  @Test func theCaretLinesUpUnderTabs() {
    #expect(
      rendered("devices a\npolicy\t\tcrdt  winer=clock") == "test.scenario:2:15: error: unknown policy key 'winer'; did you mean 'winner'?\n"
        + "policy\t\tcrdt  winer=clock\n" + "      \t\t      ^\n" + "1 error in test.scenario\n")
  }

  @Test func aPolicyErrorPointsAtTheBadWordInsideTheSpec() {
    #expect(
      rendered("devices a\npolicy crdt winner=clok") == """
        test.scenario:2:20: error: invalid value 'clok' for policy key 'winner'; valid: arrival, clock, hlc; did you mean 'clock'?
        policy crdt winner=clok
                           ^
        1 error in test.scenario

        """)
  }

  @Test func aTimeBeyondTenYearsIsAClearErrorNotATrap() {
    #expect(
      rendered(withLine("at 99999999999999999999d sync")) == """
        test.scenario:7:4: error: time 99999999999999999999d is beyond the limit of 3650d
        at 99999999999999999999d sync
           ^
        1 error in test.scenario

        """)
  }

  @Test func aFileWithoutDevicesIsReportedAtItsFirstLine() {
    #expect(
      rendered("", source: "empty.scenario") == """
        empty.scenario:1:1: error: no devices: add a 'devices' line, as in 'devices iPad phone'

        ^
        1 error in empty.scenario

        """)
  }

  @Test func everyProblemIsReportedInOnePassInLineOrder() {
    let text = """
      devices iPad phone iPad
      seed 99999999999999999999999
      type Note
        title: strng
        body: text = 5
      at 1s iPad crate Note n1
      at 2s iPad create Note n1 titel="x"
      polcy crdt
      expect lost-edits == 0
      """
    #expect(
      rendered(text, source: "many.scenario") == """
        many.scenario:1:20: error: device 'iPad' is listed twice
        devices iPad phone iPad
                           ^
        many.scenario:2:6: error: the seed is a whole number from 0 to 18446744073709551615; found '99999999999999999999999'
        seed 99999999999999999999999
             ^
        many.scenario:4:10: error: unknown kind 'strng'; did you mean 'string'?
          title: strng
                 ^
        many.scenario:5:16: error: body is text; write "…"
          body: text = 5
                       ^
        many.scenario:6:12: error: unknown action 'crate'; did you mean 'create'?
        at 1s iPad crate Note n1
                   ^
        many.scenario:7:27: error: unknown field 'titel' of Note; did you mean 'title'?
        at 2s iPad create Note n1 titel="x"
                                  ^
        many.scenario:8:1: error: unknown statement 'polcy'; did you mean 'policy'?
        polcy crdt
        ^
        many.scenario:9:8: error: unknown anomaly kind 'lost-edits'; did you mean 'lost-edit'?
        expect lost-edits == 0
               ^
        8 errors in many.scenario

        """)
  }

  @Test func diagnosticsStopAtFiftyAndCountTheRest() {
    let text = "devices a\n" + String(repeating: "bogus\n", count: 60)
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "f.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.count == 50)
    #expect(errors.omitted == 10)
    #expect(errors.diagnostics.map(\.location.line) == Array(2...51))
    #expect(errors.rendered().hasSuffix("\n50 errors in f.scenario (and 10 more not shown)\n"))
  }

  // MARK: - Messages of every error class

  @Test(arguments: [
    // Header.
    ("scenario 1x", "'1x' is not a valid scenario name: use letters, digits, '_' and '-' starting with a letter, or a \"string\""),
    ("about plain", "the about text is a string; write 'about \"…\"'"),
    (
      "policy",
      "expected a policy preset; one of: cloudkit-default, record-lww-clock, field-lww-arrival, field-lww-clock, field-lww-hlc, sync-engine-merge, crdt, append-only, hard-delete, mark-first-unit, memory-outbox, token-before-apply, naive-refetch, drops-transient, ignores-retry-after, no-split, reuploads-after-purge, wipes-after-reset, wipes-on-signout, random-record-names, dedupes-after-fetch, local-delete-rules, deletions-first, drops-orphans, drops-unknown-fields, keeps-revoked-shares, ignores-permission-failure, blocks-read-only-updates, echoes-shared-changes, skips-own-records, fetches-shares-at-launch, shares-stale-root, deletes-file-early, keeps-staging-url, merges-server-assets"
    ),
    ("policy cloudkit-defualt", "unknown policy preset 'cloudkit-defualt'; did you mean 'cloudkit-default'?"),
    ("seed -1", "the seed is a whole number from 0 to 18446744073709551615; found '-1'"),
    ("seed 18446744073709551616", "the seed is a whole number from 0 to 18446744073709551615; found '18446744073709551616'"),
    ("latency 300ms..20ms", "latency range 300ms..20ms is backwards: write the low end first, as in 20ms..300ms"),
    ("latency 20", "missing unit: write 20ms, 20s, 20m, 20h or 20d"),
    ("loss 101%", "expected a percentage from 0% to 100%, such as 1% or 0.5% (at most six decimals); write 'loss P%'"),
    ("duplicate 1", "expected a percentage from 0% to 100%, such as 1% or 0.5% (at most six decimals); write 'duplicate P%'"),
    ("clock iPad skew 2s drift 1000001ppm", "the drift is a whole number of ppm from -1000000 to +1000000; '1000001ppm' is out of range"),
    (
      "clock iPad skew 2s drift 99999999999999999999999ppm",
      "the drift is a whole number of ppm from -1000000 to +1000000; '99999999999999999999999ppm' is out of range"
    ),
    ("clock iPad skew 2s drift 40", "write the drift in ppm, as in 'drift 40ppm'"),
    ("clock iPad skew 3651d", "clock skew 3651d is beyond the limit of 3650d"),
    ("clock ipad skew 1s", "unknown device 'ipad'; did you mean 'iPad'?"),
    ("clock iPad skw 1s", "expected 'skew' after the device, found 'skw'; write 'clock DEVICE skew ±D [drift ±N ppm]'"),
    ("retention 0s", "retention must be longer than zero"),
    ("autosync never", "expected a number before the unit, as in 250ms, 2s or 1.5s"),
    ("push sometimes", "expected on, off, or a delivery percentage such as 90%; write 'push on|off|P%'"),
    ("deployed Notes", "unknown type 'Notes'; did you mean 'Note'?"),
    ("devices a b", "'devices' is already given on line 1; each header statement appears once"),
    ("seed 1 2", "unexpected '2'; write 'seed N'"),
    // Schema.
    ("type Note", "type 'Note' is already declared on line 2"),
    ("type Tag append", "unexpected 'append'; did you mean 'append-only'?"),
    ("  extra: strin", "unknown kind 'strin'; did you mean 'string'?"),
    ("  note: int", "field 'note' is already declared in Stroke on line 6"),
    ("  other: ref Nothing?", "unknown type 'Nothing'; the types are Note, Stroke"),
    ("  other: ref Note = n1", "a ref field cannot have a default; remove '= n1'"),
    ("  when: date = 5", "when is a date; write a time from the start such as 2s"),
    ("  flag: bool = \"yes\"", "flag is a bool; write true or false"),
    (
      "  n: int = 9223372036854775808",
      "number 9223372036854775808 does not fit in 64 bits: write a whole number from -9223372036854775808 to 9223372036854775807"
    ),
    ("  n: int mutable mutable", "'mutable' is given twice"),
    ("  n: int = 1 = 2", "a field has one default; this is a second"),
    ("  n: int muteable", "unexpected 'muteable'; did you mean 'mutable'?"),
    (
      "  n int",
      "expected a field, as in 'title: string'; write 'name: KIND[?] [= VALUE] [mutable] [unique] [encrypted] [on-delete RULE] [ordered] [no-inverse] [since N]'"
    ),
    // Timeline.
    (
      "at 1s iPad create Note n1",
      "record 'n1' is already created on line 7 and not deleted in between; an id is created again only after a delete of it"
    ),
    ("at 1s iPad create Notes n2", "unknown type 'Notes'; did you mean 'Note'?"),
    ("at 1s iPad create Stroke s2 note=s1", "note is a ref to Note, but 's1' is a Stroke"),
    ("at 1s iPad create Stroke s2 note=n3", "unknown record 'n3'; did you mean 'n1'?"),
    ("at 1s iPad create Stroke s2 note=\"n1\"", "note is a ref to Note; write the id of a Note record"),
    ("at 1s iPad set n1", "expected at least one field=VALUE after 'set n1'"),
    ("at 1s iPad set n1 titel=\"x\"", "unknown field 'titel' of Note; did you mean 'title'?"),
    ("at 1s iPad set n1 title=\"x\" title=\"y\"", "title is assigned twice"),
    ("at 1s iPad set n1 title= \"x\"", "expected a value right after '=', as in title=\"…\""),
    ("at 1s iPad set n1 body=true", "body is text; write \"…\""),
    ("at 1s iPad set zz title=\"x\"", "unknown record 'zz'; no 'create' line makes it"),
    ("at 1s iPad append s1.note \"x\"", "Stroke is append-only: its records are created once and never updated"),
    ("at 1s iPad append n1.title \"x\"", "append works on text fields; title is a string"),
    ("at 1s iPad append n1.body x", "expected a \"string\"; write 'DEVICE append ID.field \"text\"'"),
    ("at 1s iPad append n1 \"x\"", "expected ID.field, as in 'append n1.body \" more\"'; found 'n1'"),
    ("at 1s iPad replace n1.body \"\" \"x\"", "replace needs the text to find; it cannot be empty"),
    ("at 1s iPad replace n1.body \"a\"", "expected a \"string\" here; write 'DEVICE replace ID.field \"old\" \"new\"'"),
    ("at 1s iPad delete n3", "unknown record 'n3'; did you mean 'n1'?"),
    ("at 1s iPad background 0s", "a background budget must be longer than zero"),
    ("at 1s iPad clock 2sec", "unknown duration unit 'sec'; did you mean 's'?"),
    ("at 1s iPad clock -3651d", "clock jump -3651d is beyond the limit of 3650d"),
    ("at 1s iPad sync now", "unexpected 'now'; write 'DEVICE sync'"),
    (
      "at 1s iPad",
      "expected an action after 'iPad': create, set, append, replace, delete, sync, send, fetch, kill, background, clock, delete-zone, purge-zone, sign-out, sign-in, switch-account, upgrade, share, invite, accept, leave, unshare, permission, remove, delete-file, change-file or purge-staging"
    ),
    ("at 1s iPad crate Note n9", "unknown action 'crate'; did you mean 'create'?"),
    (
      "at 1s iPad explode",
      "unknown action 'explode'; a device can create, set, append, replace, delete, sync, send, fetch, kill, background, clock, delete-zone, purge-zone, sign-out, sign-in, switch-account, upgrade, share, invite, accept, leave, unshare, permission, remove, delete-file, change-file or purge-staging"
    ),
    ("at 1s snyc", "unknown action 'snyc'; did you mean 'sync'?"),
    ("at 1s ofline iPad", "unknown action 'ofline'; did you mean 'offline'?"),
    ("at 1s tablet sync", "unknown device 'tablet'; the devices are iPad, phone"),
    ("at 1s offline", "expected device names after 'offline', as in 'offline iPad phone'"),
    ("at 1s online iPad iPad", "device 'iPad' is listed twice"),
    ("at 1s server sideways", "expected 'down' or 'up' after 'server'"),
    ("at 1s server dwon", "expected 'down' or 'up' after 'server'; did you mean 'down'?"),
    ("at 3651d sync", "time 3651d is beyond the limit of 3650d"),
    ("at -1s sync", "a duration here cannot have a sign; write '1s'"),
    ("at 1s", "expected an action after the time: a device's action, sync, offline, online, server, free, reject, encrypted-data-reset or settle"),
    ("at soon sync", "expected a number before the unit, as in 250ms, 2s or 1.5s"),
    ("iPad sync", "unknown statement 'iPad'; a timeline line starts with 'at TIME', as in 'at 1s iPad sync'"),
    ("\"loose string\"", "expected a statement, found a string; statements start with a keyword such as 'at' or 'expect'"),
    ("\tat 1s sync", "'at' must start at the beginning of the line; only a type's fields are indented"),
    // Expectations.
    (
      "expect",
      "expected what to expect: no violations, no KIND, KIND == N, converged, ID.field == VALUE, ID.field in VALUE..., ID exists or ID deleted"
    ),
    ("expect no lost-edits", "unknown anomaly kind 'lost-edits'; did you mean 'lost-edit'?"),
    ("expect lost-edit == -1", "expected a count: a whole number from 0 to 9223372036854775807"),
    ("expect resurection <= 2", "unknown anomaly kind 'resurection'; did you mean 'resurrection'?"),
    ("expect converge", "unknown expectation 'converge'; did you mean 'converged'?"),
    ("expect n1 exist", "unknown expectation 'exist'; did you mean 'exists'?"),
    ("expect n7 deleted", "unknown record 'n7'; did you mean 'n1'?"),
    ("expect n1.titel == \"x\"", "unknown field 'titel' of Note; did you mean 'title'?"),
    ("expect n1.title == 5", "title is a string; write \"…\""),
    ("expect n1.title = \"a\"", "expected '==' or 'in' after 'n1.title', found '='"),
    ("expect s1.note in n1 s1", "note is a ref to Note, but 's1' is a Stroke"),
  ])
  func everyErrorClassHasAMessageThatSaysWhatToDo(line: String, message: String) {
    #expect(messages(withLine(line)) == [message])
  }

  @Test func settleEndsTheTimeline() {
    #expect(
      messages("devices a\nat 5s settle\nat 6s a sync\nat 5s a sync\nsettle") == [
        "this line is at 6s, after 'settle' at 5s (line 2); settle ends the timeline",
        "a second 'settle': a file has at most one (the first is on line 2)",
      ])
    #expect(messages("devices a\nsettle\nat 1s a sync") == ["'at' line after 'settle' (line 2); the timeline comes before a standalone settle"])
    #expect(
      messages("devices a\nat soon settle\nat 5s a sync") == ["expected a number before the unit, as in 250ms, 2s or 1.5s"],
      "a settle with a bad time is reported once, with nothing compared to it")
    #expect(messages("devices a\nat 5s a sync\nat 5s settle").isEmpty, "a line at the settle's own time is fine")
  }

  @Test func headerStatementsComeBeforeTheTimeline() {
    #expect(messages("devices a\nat 1s a sync\nseed 5") == ["'seed' belongs in the header, before the first 'at' line (line 2)"])
    #expect(messages("devices a\nat 1s a sync\ntype T\nexpect converged").isEmpty, "types and expectations may come anywhere")
  }

  @Test func deviceNamesAreUniqueValidAndNotWorldEvents() {
    #expect(messages("devices") == ["expected at least one device name; write 'devices NAME...', as in 'devices iPad phone'"])
    #expect(
      messages("devices a sync b a 9z") == [
        "'sync' cannot name a device: after 'at TIME' it starts a world event",
        "device 'a' is listed twice",
        "'9z' is not a valid device name: names start with a letter and go on with letters, digits, '_' or '-'",
      ])
    #expect(messages("devices \"a\"") == ["device names are bare words, not strings: write a without quotes"])
  }

  @Test func deviceCountIsBetweenOneAndAThousand() {
    let names = (1...1_001).map { "d\($0)" }
    #expect(messages("devices " + names.joined(separator: " ")) == ["too many devices: at most 1000"])
    #expect(messages("devices " + names.dropLast().joined(separator: " ")).isEmpty)
  }

  @Test func aBadDeclarationIsReportedOnceNotAtEveryUse() {
    // `title` has a bad kind: uses of it are not reported again.
    #expect(messages("devices a\ntype Note\n  title: strng\nat 1s a create Note n1 title=\"x\"") == ["unknown kind 'strng'; did you mean 'string'?"])
    // A bad device name is reported where it is declared.
    #expect(
      messages("devices a 2b\nat 1s 2b sync") == [
        "'2b' is not a valid device name: names start with a letter and go on with letters, digits, '_' or '-'"
      ])
  }

  @Test func keywordsAreLowercase() {
    #expect(messages("devices a\nSeed 3") == ["unknown statement 'Seed'; did you mean 'seed'?"])
  }
}
