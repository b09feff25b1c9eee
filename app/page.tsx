export default function Home() {
  return <main className="p-4">Baton operator console</main>;
}
