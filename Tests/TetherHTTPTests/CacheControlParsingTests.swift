import Foundation
import Testing

@testable import TetherHTTP

/// `Cache-Control` parsing (RFC 9111 §5.2), with the inputs `FuzzCacheControl` found (FUZZING.md, "Bugs found").
struct CacheControlParsingTests {
    @Test func directivesAreLowercasedAndValuesUnquoted() {
        #expect(
            CacheRules.directives(#"Max-Age=60, No-Cache="Set-Cookie", public"#)
                == ["max-age": "60", "no-cache": "Set-Cookie", "public": ""]
        )
    }

    /// Found by FuzzCacheControl on its first seed: the comma inside the quoted field list split the directive,
    /// leaving `"Set-Cookie` (quote and all) as no-cache's value and `set-cookie2"` as a directive of its own.
    @Test func commaInsideQuotedStringDoesNotSeparateDirectives() {
        #expect(
            CacheRules.directives(#"no-cache="Set-Cookie, Set-Cookie2", max-age=60"#)
                == ["no-cache": "Set-Cookie, Set-Cookie2", "max-age": "60"]
        )
        #expect(CacheRules.directives(#"a="b,c""#) == ["a": "b,c"])
    }

    /// A quoted value can no longer smuggle a directive: before, `max-age=31536000` here made the response fresh
    /// for a year.
    @Test func quotedStringCannotSmuggleADirective() {
        let directives = CacheRules.directives(#"no-cache="x, max-age=31536000""#)
        #expect(directives == ["no-cache": "x, max-age=31536000"])
        #expect(directives["max-age"] == nil)
    }

    @Test func quotedPairsAreUnescaped() {
        #expect(CacheRules.directives(#"private="a\"b\\c, d""#) == ["private": #"a"b\c, d"#])
    }

    /// Quotes and commas are found among Unicode scalars: a combining mark after one does not hide it.
    @Test func combiningMarkAfterAQuoteOrCommaDoesNotHideIt() {
        let directives = CacheRules.directives("private=\"\u{301}x, y\", max-age=5")
        #expect(directives == ["private": "\u{301}x, y", "max-age": "5"])
    }

    @Test func malformedPartsAreKeptAsBeforeOrSkipped() {
        // An unterminated quoted string stays as it is, and swallows the rest of the header.
        #expect(CacheRules.directives(#"no-cache="a, max-age=5"#) == ["no-cache": #""a, max-age=5"#])
        // Empty parts and nameless ones are skipped.
        #expect(CacheRules.directives(" , ,=5, no-store") == ["no-store": ""])
    }

    /// Names and values are trimmed of `CharacterSet.whitespaces` on scalars, exactly as `trimmingCharacters(in:)`
    /// trimmed them (tab and Unicode spaces, U+200B included; not line breaks or U+FEFF).
    @Test(arguments: [
        "\t", " ", "\u{A0}", "\u{1680}", "\u{2003}", "\u{200B}", "\u{202F}", "\u{3000}", "\n", "\u{FEFF}",
    ])
    func namesAndValuesAreTrimmedAsTrimmingCharactersDid(space: String) {
        let name = space + "Max-Age" + space
        let value = space + "5" + space + "x" + space
        let directives = CacheRules.directives(name + "=" + value)
        let expectedName = name.trimmingCharacters(in: .whitespaces).lowercased()
        let expectedValue = value.trimmingCharacters(in: .whitespaces)
        #expect(directives == [expectedName: expectedValue])
    }
}
