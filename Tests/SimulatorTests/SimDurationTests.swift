import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct SimDurationTests {
  @Test(arguments: [
    ("250ms", Int64(250_000_000)), ("2s", 2_000_000_000), ("1.5s", 1_500_000_000), ("3m", 180_000_000_000),
    ("2h", 7_200_000_000_000), ("30d", 2_592_000_000_000_000), ("20us", 20_000), ("20µs", 20_000), ("7ns", 7),
    ("0s", 0), ("0.001s", 1_000_000), ("1.25ms", 1_250_000),
  ])
  func parsesTheUnitsScenarioFilesUse(text: String, nanoseconds: Int64) throws {
    #expect(try SimDuration.parse(text).get().nanoseconds == nanoseconds)
  }

  @Test func signedDurationsNeedPermission() throws {
    #expect(try SimDuration.parse("+2s", allowSign: true).get() == .seconds(2))
    #expect(try SimDuration.parse("-500ms", allowSign: true).get() == .milliseconds(-500))
    #expect(try SimDuration.parse("2s", allowSign: true).get() == .seconds(2))
    #expect(throws: SimDuration.ParseError.self) { try SimDuration.parse("-2s").get() }
  }

  @Test func rejectsWhatIsNotADurationWithAHelpfulMessage() {
    func message(_ s: String) -> String {
      if case .failure(let e) = SimDuration.parse(s) { return e.message }
      return "parsed"
    }
    #expect(message("2sec").contains("did you mean 's'"))
    #expect(message("5").contains("missing unit"))
    #expect(message("").contains("expected a duration"))
    #expect(message("ms").contains("expected a number"))
    #expect(message("1.s").contains("digits after the decimal point"))
    #expect(message("1.5ns").contains("finer than one nanosecond"))
    #expect(message("99999999999999999999d").contains("too long"))
    #expect(message("200000d").contains("too long"))
    #expect(message("2x").contains("unknown duration unit 'x'"))
  }

  @Test(arguments: [
    (Int64(250_000_000), "250ms"), (1_500_000_000, "1.5s"), (90_000_000_000, "1.5m"), (2_592_000_000_000_000, "30d"),
    (-2_000_000_000, "-2s"), (0, "0s"), (1, "1ns"), (1_234, "1.234us"), (1_000_000_001, "1000000.001us"),
  ])
  func printsTheShortestExactSpelling(nanoseconds: Int64, text: String) {
    #expect(SimDuration(nanoseconds: nanoseconds).description == text)
  }

  @Test func printingAndParsingRoundTrip() throws {
    var rng = SimRandom(seed: 3)
    for _ in 0..<5_000 {
      // Mix magnitudes so every unit is exercised.
      let magnitude = rng.int(in: 0...18)
      var limit: Int64 = 1
      for _ in 0..<magnitude { limit *= 10 }
      let d = SimDuration(nanoseconds: rng.int(in: -limit...limit))
      let reparsed = try SimDuration.parse(d.description, allowSign: true).get()
      #expect(reparsed == d, "\(d.nanoseconds)ns printed as \(d)")
    }
  }

  @Test func reportsPrintInstantsInSecondsWithMilliseconds() {
    #expect((VirtualTime.zero + .milliseconds(2_200)).description == "2.200s")
    #expect(VirtualTime(nanoseconds: 250_000).description == "0.00025s")
    #expect(VirtualTime(nanoseconds: 12_431_000_000).description == "12.431s")
    #expect(VirtualTime(nanoseconds: -1_500_000_000).description == "-1.500s")
  }

  @Test func arithmeticSaturatesInsteadOfTrapping() {
    #expect(VirtualTime.distantFuture + .seconds(1) == .distantFuture)
    #expect(SimDuration(nanoseconds: .max) * 2 == SimDuration(nanoseconds: .max))
    #expect(SimDuration(nanoseconds: .max) * -2 == SimDuration(nanoseconds: .min))
    #expect((VirtualTime.zero + .seconds(5)) - (VirtualTime.zero + .seconds(2)) == .seconds(3))
  }
}
