/// The characters no text the tools print may carry to a terminal as they are, besides the
/// control characters: the invisible ones that reorder or break a line — bidirectional marks,
/// embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and
/// the line and paragraph separators (U+2028, U+2029). A scenario's title holding U+2028 then
/// "✓ expectations held" would print a line of its own inside a failing report; an override
/// shows a file name or a value backwards.
package enum TerminalText {
  /// Whether `u` reorders or breaks the text around it without showing itself.
  @inlinable
  package static func isInvisibleLayout(_ u: Unicode.Scalar) -> Bool {
    switch u.value {
    case 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
