import { Dashboard } from '@/components/dashboard.tsx';

// The page is a shell (rendered per request for its CSP nonce, see layout.tsx); every figure on
// it arrives over /api/v1/events in the browser.
export default function Home() {
  return <Dashboard />;
}
