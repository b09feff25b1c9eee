// App Router skeleton for the operator console. The console issue installs Next.js and
// fills this in; until then it is not built or type-checked (see tsconfig "exclude").
export default function RootLayout({ children }: { children: unknown }) {
  return (
    <html lang="en">
      <body>{children as never}</body>
    </html>
  );
}
