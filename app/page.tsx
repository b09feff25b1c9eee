export default function Home() {
  return <main>Baton operator console: coming with the console issue.</main>;
}
