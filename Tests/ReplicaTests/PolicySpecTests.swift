import Testing

@testable import Replica

@Suite struct PolicySpecTests {
  @Test func aPresetWithOverridesParses() throws {
    let spec = try PolicySpec.parse("field-lww-hlc delete=hard retention=7d batch=5").get()
    #expect(spec.settings.delete == .hard)
    #expect(spec.settings.retention == .days(7))
    #expect(spec.settings.batch == 5)
    #expect(spec.description == "field-lww-hlc delete=hard retention=7d batch=5")
  }

  @Test func errorsNameTheBadWordAndTheValidOnes() {
    func error(_ s: String) -> PolicySpec.ParseError? {
      if case .failure(let e) = PolicySpec.parse(s) { return e }
      return nil
    }
    #expect(error("cloudkit-defualt")?.message == "unknown policy preset 'cloudkit-defualt'; did you mean 'cloudkit-default'?")
    #expect(error("crdt winer=clock")?.message == "unknown policy key 'winer'; did you mean 'winner'?")
    #expect(
      error("crdt winner=clok")?.message.hasPrefix("invalid value 'clok' for policy key 'winner'; valid: arrival, clock, hlc; did you mean 'clock'?")
        == true)
    #expect(error("crdt winner=clok")?.offset == 12)
    #expect(error("crdt delete=hard delete=tombstone")?.message == "policy key 'delete' given twice")
    #expect(error("crdt batch=0") != nil)
    #expect(error("crdt retention=0s") != nil)
    #expect(error("") != nil)
  }

  @Test func everyPresetIsDistinctAndPlantedBugsDifferFromTheirBase() {
    let all = PolicyPreset.all
    #expect(all.count == 35)
    #expect(
      all.filter(\.plantedBug).map(\.name) == [
        "hard-delete", "mark-first-unit", "memory-outbox", "token-before-apply", "naive-refetch", "drops-transient", "ignores-retry-after",
        "no-split", "reuploads-after-purge", "wipes-after-reset", "wipes-on-signout", "random-record-names", "dedupes-after-fetch",
        "local-delete-rules", "deletions-first", "drops-orphans", "drops-unknown-fields", "keeps-revoked-shares", "ignores-permission-failure",
        "blocks-read-only-updates", "echoes-shared-changes", "skips-own-records", "fetches-shares-at-launch", "shares-stale-root",
        "deletes-file-early", "keeps-staging-url", "merges-server-assets",
      ])
    let base = PolicyPreset.named("field-lww-hlc")!.settings
    for p in all where p.plantedBug { #expect(p.settings != base, "\(p.name)") }
  }
}
