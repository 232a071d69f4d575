// Allocates steadily so young collections happen while jstat watches; runs
// for the number of milliseconds given as its argument.
public class Alloc {
    public static void main(String[] args) throws Exception {
        java.util.List<byte[]> keep = new java.util.ArrayList<>();
        long end = System.currentTimeMillis() + Long.parseLong(args[0]);
        while (System.currentTimeMillis() < end) {
            keep.add(new byte[64 << 10]);
            if (keep.size() > 200) keep.clear();
            Thread.sleep(1);
        }
    }
}
