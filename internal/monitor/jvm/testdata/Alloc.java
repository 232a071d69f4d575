// Alloc keeps the young generation busy so that the JVM monitor tests see
// young collections: about 100 KB of short-lived garbage per millisecond,
// with a little kept for a while so the old generation moves too. It exits
// on its own after a minute in case the test that started it is killed.
import java.util.ArrayList;
import java.util.List;

public class Alloc {
    public static void main(String[] args) throws Exception {
        List<byte[]> keep = new ArrayList<>();
        long end = System.currentTimeMillis() + 60_000;
        long sink = 0;
        while (System.currentTimeMillis() < end) {
            for (int i = 0; i < 100; i++) {
                byte[] b = new byte[1024];
                b[i % 1024] = (byte) i;
                sink += b[0];
                if (i == 0) {
                    keep.add(b);
                    if (keep.size() > 2000) {
                        keep.clear();
                    }
                }
            }
            Thread.sleep(1);
        }
        System.out.println(sink);
    }
}
