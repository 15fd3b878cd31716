import PresenceHTTP
import Testing

@Suite struct ListenAddressTests {
    @Test(arguments: [("127.0.0.1:8080", "127.0.0.1", 8080), ("[::1]:0", "::1", 0), ("localhost:65535", "localhost", 65535)])
    func validAddressesParse(text: String, host: String, port: Int) {
        #expect(ListenAddress(parsing: text) == ListenAddress(host: host, port: port))
    }

    @Test(arguments: ["8080", ":8080", "host:", "host:65536", "host:-1", "a/b:80", "[::1:80", "host:80x"])
    func badAddressesAreRefused(text: String) {
        #expect(ListenAddress(parsing: text) == nil)
    }
}
