import SimCLI
import Testing

/// Colour only on a terminal without NO_COLOR; marks and leading FAIL / Error: only.
@Suite struct ConsoleColourTests {
  @Test func marksAndFailuresAreColouredOnlyWhenAsked() {
    let text = "✓ line 3: ok\n  ✗ line 4: no\nFAIL lost-edit · seed 1\nError: nope\nnot a FAIL here"
    #expect(Console.coloured(text, false) == text)
    let coloured = Console.coloured(text, true)
    #expect(coloured.contains("\u{1B}[32m✓\u{1B}[0m line 3"))
    #expect(coloured.contains("  \u{1B}[31m✗\u{1B}[0m line 4"))
    #expect(coloured.contains("\u{1B}[1;31mFAIL\u{1B}[0m lost-edit"))
    #expect(coloured.contains("\u{1B}[1;31mError:\u{1B}[0m nope"))
    #expect(coloured.hasSuffix("\nnot a FAIL here"))
    // A captured console (tests, files, pipes) never colours.
    let (console, output) = Console.capturing()
    console.out("✓ fine\n")
    #expect(output.stdout == "✓ fine\n")
  }
}
