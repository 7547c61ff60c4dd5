/// The inspector's page, served whole at `/` (nothing is fetched from elsewhere: no framework, no font).
public enum InspectorPage {
    /// The HTML document, with its style and script inline.
    public static var html: String {
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Breeze inspector</title></head><body>placeholder</body></html>"
    }
}
